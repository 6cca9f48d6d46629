package dev.vgpu.dra;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which PCI functions the claims this plugin prepared hold, read from the prepared-claims checkpoint in its state
 * directory (the file a daemon in DRA mode keeps there). A VF named there is in a VM's hands, so the vGPU configurator
 * never writes it. Read-only and strict: a file that is there but is not a usable checkpoint (a link, not a regular
 * file, too large, not UTF-8, not this format) is an {@link IOException} naming it, never an empty answer, so that a
 * caller that must not guess refuses to act. Mediated devices are left out (they have no PCI address). Stateless.
 * <pre>{@code
 * InUse inUse = InUse.allOf(KubeletCheckpoint.in(deviceDir), () -> PreparedDevices.pciAddresses(stateDir));
 * }</pre>
 */
public final class PreparedDevices {

    /** The checkpoint's name in the state directory. */
    public static final String FILE = "dra-prepared-claims";

    private PreparedDevices() {
    }

    /**
     * The PCI addresses of every device of every claim prepared, as the checkpoint in {@code stateDir} says; empty
     * when there is no checkpoint.
     *
     * @throws IOException naming the file when it is there but cannot be read or used
     */
    public static Set<PciAddress> pciAddresses(Path stateDir) throws IOException {
        Objects.requireNonNull(stateDir, "stateDir");
        Set<PciAddress> held = new TreeSet<>();
        try {
            Checkpoint.loadStrictly(stateDir.resolve(FILE)).values().forEach(claim -> claim.devices().forEach(
                    device -> DeviceNames.pciAddress(device.device()).ifPresent(held::add)));
        } catch (NoSuchFileException e) {
            return Set.of();
        }
        return Set.copyOf(held);
    }
}
