package dev.vgpu.daemon.configure;

import dev.vgpu.configurator.HostWrites;
import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.testing.VgpuManagerSimulator;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a layout is read and written: a host's sysfs under its root, or (with {@code --simulated-host}) the tree of
 * vgpu-testing's vGPU-manager simulator, whose writes follow the driver's rules. The simulator is chosen only by that
 * flag, never by what a tree holds: a real host is never written through it.
 *
 * @param root      the host root
 * @param simulated whether writes go through the simulator
 */
record LayoutHost(Path root, boolean simulated) {

    /**
     * The host the options name.
     *
     * @throws Refusal when the root is not a directory, or {@code --simulated-host} names a tree without the
     *                 simulator's state file
     */
    static LayoutHost of(Path root, boolean simulated) {
        if (!Files.isDirectory(root)) {
            throw new Refusal("--host-root " + root + " is not a directory");
        }
        if (simulated && !VgpuManagerSimulator.isSimulated(root)) {
            throw new Refusal("--simulated-host: " + root + " holds no " + VgpuManagerSimulator.STATE_FILE + " (the"
                    + " vGPU-manager simulator's state file): it is not a simulated host");
        }
        return new LayoutHost(root, simulated);
    }

    /** Reads the host's cards, naming types with {@code names} where their catalogs do not. */
    SysfsVgpuHost reader(VgpuTypeResolver names) {
        return SysfsVgpuHost.at(root, names);
    }

    /** Writes to the host: sysfs, or the simulator (its state read again at every write, as another process may). */
    HostWrites writes() {
        if (!simulated) {
            return SysfsVgpuHost.at(root);
        }
        return HostWrites.of((pf, count) -> VgpuManagerSimulator.open(root).writeVfCount(pf, count),
                (vf, typeId) -> VgpuManagerSimulator.open(root).writeType(vf, typeId));
    }

    /** For logs. */
    String describe() {
        return simulated ? "the simulated host " + root : "host root " + root;
    }
}
