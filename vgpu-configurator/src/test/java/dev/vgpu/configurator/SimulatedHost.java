package dev.vgpu.configurator;

import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.testing.SimulatedCard;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testing.VgpuManagerSimulator;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A host for applier tests: vgpu-testing's simulator writes (the driver's rules), the configurator's sysfs reader
 * reads the tree it keeps, exactly as the daemon wires them.
 */
final class SimulatedHost {

    final VgpuManagerSimulator simulator;
    final Path root;

    SimulatedHost(Path root, SimulatedCard... cards) {
        this.root = root;
        this.simulator = VgpuManagerSimulator.create(SysfsTree.at(root), List.of(cards));
    }

    /** The simulator's writes through the configurator's SPI. */
    HostWrites writes() {
        return HostWrites.of(simulator::writeVfCount, simulator::writeType);
    }

    Applier applier() {
        return applier(VgpuTypeResolver.none());
    }

    Applier applier(VgpuTypeResolver names) {
        return new Applier(SysfsVgpuHost.at(root, names), writes());
    }

    /** VF → type of a card, from the simulator's own state. */
    Map<String, Long> vgpus(String pf) {
        return simulator.vgpus(pf);
    }

    static PciAddress at(String bdf) {
        return PciAddress.parse(bdf);
    }
}
