package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciIds;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.ScanScope;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class HostStateDirectoryTest {

    private static final Path ROOT = Path.of("/host");
    private static final Path STATE = Path.of("/var/lib/vgpu");

    @Test
    void aHostHasNoStateDirectoryUnlessGivenOne() {
        assertThat(Host.of(ROOT).stateDirectory()).isEmpty();
        assertThat(new Host(ROOT, HostFiles.nio(), PciIds.empty(), VgpuTypeResolver.none()).stateDirectory())
                .isEmpty();
    }

    @Test
    void theStateDirectoryStaysThroughEveryCopy() {
        Host host = Host.of(ROOT).withStateDirectory(STATE);

        assertThat(host.stateDirectory()).contains(new StateDirectory(STATE, true));
        for (Host copy : new Host[] {host.forScan(), host.withPciIds(PciIds.empty()),
            host.withVgpuTypes(VgpuTypeResolver.none()), host.withScanScope(ScanScope.fresh()),
            host.withFiles(HostFiles.nio())}) {
            assertThat(copy.stateDirectory()).contains(StateDirectory.of(STATE));
        }
        assertThat(host.withStateDirectory(StateDirectory.forReading(STATE)).stateDirectory().orElseThrow().mayWrite())
                .isFalse();
    }

    @Test
    void nullsAreRefusedNamingWhatIsMissing() {
        assertThatThrownBy(() -> new StateDirectory(null, true)).hasMessageContaining("path");
        assertThatThrownBy(() -> new Host(ROOT, HostFiles.nio(), PciIds.empty(), VgpuTypeResolver.none(),
                ScanScope.none(), null)).hasMessageContaining("stateDirectory");
        assertThatThrownBy(() -> Host.of(ROOT, null)).hasMessageContaining("files");
    }
}
