package dev.vgpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class StaticHelpersTest {

    @ParameterizedTest(name = "VF {1} of {0} is {2}")
    @CsvSource({
        "0000:1b:00.0, 0,  0000:1b:00.4",
        "0000:1b:00.0, 3,  0000:1b:00.7",
        "0000:1b:00.0, 4,  0000:1b:01.0",
        "0000:1b:00.0, 63, 0000:1b:08.3",
        "0000:41:00.0, 0,  0000:41:00.4",
        "0000:1b:1f.0, 4,  0000:1c:00.0",
        "0009:01:00.0, 1,  0009:01:00.5",
    })
    void vfAddressesFollowOffsetFourStrideOne(String pf, int index, String vf) {
        assertThat(SysfsTree.vfAddress(pf, index)).isEqualTo(vf);
    }

    @Test
    void vfAddressRejectsNonsense() {
        assertThatThrownBy(() -> SysfsTree.vfAddress("0000:ff:1f.0", 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SysfsTree.vfAddress("0000:1b:00.0", -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SysfsTree.vfAddress("1b:00.0", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void catalogTextIsTheDriverFormatSortedById() {
        Map<Long, String> types = new LinkedHashMap<>();
        types.put(2164L, "NVIDIA L40S-3B");
        types.put(1145L, "NVIDIA L40S-1B");
        types.put(123456L, "Long Id");

        assertThat(SysfsTree.creatableTypesText(types)).isEqualTo(
                "ID    : vGPU Name\n1145  : NVIDIA L40S-1B\n2164  : NVIDIA L40S-3B\n123456 : Long Id\n");
        assertThat(SysfsTree.creatableTypesText(Map.of())).isEqualTo("ID    : vGPU Name\n");
    }

    @Test
    void defaultParentDerivesRootComplexFromTheBus() {
        assertThat(PciFunction.defaultParent("0000:41:00.0")).isEqualTo("pci0000:40/0000:40:01.1");
        assertThat(PciFunction.defaultParent("0009:01:00.0")).isEqualTo("pci0009:00/0009:00:01.1");
    }
}
