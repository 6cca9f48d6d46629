package dev.vgpu.configurator;

import static dev.vgpu.configurator.SimulatedHost.at;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SimulatedCard;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a later process names the types of a card the configurator filled (whose catalogs then list nothing) without
 * NVML: the scan after applying takes the run's names ({@link ApplyReport#typeNames()}), the {@code vendor-vfio}
 * source keeps them in its state directory, and the next process names the held types from that source's devices.
 */
class NamesAcrossRunsTest {

    static final String A = "0000:41:00.0";

    @TempDir
    Path dir;

    @Test
    void aFullCardIsNamedInTheNextProcessThroughTheVendorVfioSourcesStateDirectory() throws IOException {
        SimulatedHost host = new SimulatedHost(dir.resolve("host"), SimulatedCard.l40s(A).withTotalVfs(4)
                .withEnabledVfs(0).withCatalogOnPf(false));
        Path state = dir.resolve("state");
        Map<PciAddress, CardDemand> full = Map.of(at(A), CardDemand.layout(Map.of("L40S-12Q", 4)));

        ApplyReport first = host.applier().apply(full, InUse.none());
        Discovery scanAfterApplying = new VendorVfioSource().discover(Host.of(host.root)
                .withVgpuTypes(first.typeNames()).withStateDirectory(state));

        Discovery nextProcess = new VendorVfioSource().discover(Host.of(host.root).withStateDirectory(state));
        ApplyReport second = host.applier(KnownTypeNames.fromDevices(nextProcess.devices())).apply(full,
                InUse.none());

        assertThat(first.hostMatches()).isTrue();
        assertThat(scanAfterApplying.devices()).hasSize(4);
        assertThat(nextProcess.devices()).hasSize(4);
        assertThat(second.cards()).containsExactly(new CardOutcome.Unchanged(at(A)));
        assertThat(host.simulator.writeAttempts()).isEqualTo(first.writes());
    }
}
