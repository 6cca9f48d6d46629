package dev.vgpu.daemon.configure;

import dev.vgpu.configurator.InUse;
import dev.vgpu.configurator.inuse.KubeletCheckpoint;
import dev.vgpu.dra.PreparedDevices;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Which VFs are in use, as the layout's applier asks before every write: those the kubelet allocated
 * ({@code <device-plugin-dir>/kubelet_internal_checkpoint}) and those a claim the DRA plugin prepared holds (its
 * checkpoint in the state directory). Both are read in either mode: a VF handed out before a switch of modes is still
 * in a VM's hands. A checkpoint that is there but unusable makes the answer unknown, and nothing is written.
 *
 * <p>The one class outside the DRA adapter that names vgpu-dra: only its file reader {@link PreparedDevices}, which
 * loads no gRPC or API-server class (the architecture test holds it to that).
 *
 * @param devicePluginDir the kubelet's device-plugin directory, where its checkpoint is
 * @param stateDir        the daemon's state directory, where the DRA plugin keeps its checkpoint; empty = none
 */
record InUseSources(Path devicePluginDir, Optional<Path> stateDir) {

    /** The VFs in use now, read again at every ask. */
    InUse inUse() {
        List<InUse> sources = new ArrayList<>(List.of(KubeletCheckpoint.in(devicePluginDir)));
        stateDir.ifPresent(dir -> sources.add(() -> PreparedDevices.pciAddresses(dir)));
        return InUse.allOf(sources.toArray(InUse[]::new));
    }

    /** For logs: the files read. */
    String describe() {
        return devicePluginDir.resolve(KubeletCheckpoint.FILE) + stateDir.map(dir -> " and "
                + dir.resolve(PreparedDevices.FILE)).orElse("");
    }
}
