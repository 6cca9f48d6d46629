package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An operator's type-name table after another resolver, keyed by the card's PCI device id as sysfs shows it. */
class VgpuTypeNameTableTest {

    private static final PciAddress L40S = PciAddress.parse("0000:1b:00.0");
    private static final PciAddress H100 = PciAddress.parse("0000:41:00.0");
    private static final VgpuTypeNameTable TABLE = new VgpuTypeNameTable(Map.of("26B9",
            Map.of(1152L, "NVIDIA L40S-1Q", 1153L, "NVIDIA L40S-2Q")));

    @TempDir
    Path root;

    private Host host() throws IOException {
        for (String[] card : new String[][] {{L40S.toString(), "0x26b9"}, {H100.toString(), "0x2331"}}) {
            Path dir = Files.createDirectories(root.resolve("sys/bus/pci/devices").resolve(card[0]));
            Files.writeString(dir.resolve("device"), card[1] + "\n");
        }
        return Host.of(root);
    }

    @Test
    void withoutNvmlTheTableNamesTheTypesOfCardsWithItsDeviceId() throws IOException {
        VgpuTypeResolver resolver = TABLE.after(VgpuTypeResolver.none(), host());

        VgpuTypeNames l40s = resolver.supportedTypes(L40S);
        assertThat(l40s.name(1153)).contains("NVIDIA L40S-2Q");
        assertThat(l40s.name(1155)).isEmpty();
        assertThat(l40s).isInstanceOf(VgpuTypeNames.Answered.class);
        assertThat(resolver.supportedTypes(H100)).as("another card: the first resolver's answer")
                .isEqualTo(VgpuTypeResolver.none().supportedTypes(H100));
    }

    @Test
    void whatTheFirstResolverNamesWinsAndItsFailureIsKept() throws IOException {
        VgpuTypeResolver nvml = pf -> VgpuTypeNames.of(Map.of(1152L, "NVIDIA L40S-1Q (from NVML)"));
        assertThat(TABLE.after(nvml, host()).supportedTypes(L40S)).isEqualTo(VgpuTypeNames.of(Map.of(
                1152L, "NVIDIA L40S-1Q (from NVML)", 1153L, "NVIDIA L40S-2Q")));

        VgpuTypeNames failed = TABLE.after(pf -> VgpuTypeNames.failed("GPU_IS_LOST"), host()).supportedTypes(L40S);
        assertThat(failed).isEqualTo(VgpuTypeNames.failed("GPU_IS_LOST"));
    }

    @Test
    void anEmptyTableIsTheFirstResolverAndACardWithoutADeviceFileGetsNothingFromIt() {
        VgpuTypeResolver first = VgpuTypeResolver.none();
        assertThat(VgpuTypeNameTable.empty().after(first, Host.of(root))).isSameAs(first);
        assertThat(TABLE.after(first, Host.of(root)).supportedTypes(L40S)).isEqualTo(first.supportedTypes(L40S));
    }

    @Test
    void badIdsAndNamesAreRefused() {
        assertThatThrownBy(() -> new VgpuTypeNameTable(Map.of("2x31", Map.of(1L, "a"))))
                .hasMessageContaining("device id \"2x31\" is not 4 hex digits");
        assertThatThrownBy(() -> new VgpuTypeNameTable(Map.of("2331", Map.of(1L, " "))))
                .hasMessageContaining("type 1 of device 2331 has no name");
        assertThatThrownBy(() -> new VgpuTypeNameTable(Map.of("26b9", Map.of(), "26B9", Map.of())))
                .hasMessageContaining("device id 26b9 is given twice");
        assertThat(TABLE.names()).containsOnlyKeys("26b9");
    }
}
