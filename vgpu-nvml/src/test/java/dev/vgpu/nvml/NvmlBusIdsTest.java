package dev.vgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** NVML bus ids become the sysfs addresses that the rest of the project compares (docs/HOST-FACTS.md trap 23). */
class NvmlBusIdsTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "00000000:41:00.0, 0000:41:00.0",
        "00000000:C1:00.0, 0000:c1:00.0",
        "00000001:03:00.0, 0001:03:00.0",
        "0000:3B:00.0,     0000:3b:00.0",
        "00000009:01:00.0, 0009:01:00.0",
        "'00000000:41:00.0 ', 0000:41:00.0",
    })
    void nvmlFormsBecomeSysfsAddresses(String nvml, String sysfs) {
        PciAddress address = NvmlBusIds.toPciAddress(nvml);

        assertThat(address).isEqualTo(PciAddress.parse(sysfs));
        assertThat(address.toString()).isEqualTo(sysfs);
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"41:00.0", "00000000:41:00", "000000000:41:00.0", "00000000:41:00.8", "GPU-1234"})
    void otherTextIsRejected(String text) {
        assertThatThrownBy(() -> NvmlBusIds.toPciAddress(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not an NVML PCI bus id");
    }
}
