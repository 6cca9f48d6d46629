package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** How {@link CardCatalogs} compares a profile name of the driver's table with one NVML or the configuration gives. */
class CardCatalogsTest {

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"NVIDIA  H200X-141C", " NVIDIA H200X-141C ", "NVIDIA\tH200X-141C", "NVIDIA \u00a0H200X-141C"})
    void whitespaceRunsCollapseForComparison(String name) {
        String collapsed = CardCatalogs.collapseWhitespace(name);
        assertThat(collapsed).isIn("NVIDIA H200X-141C", "NVIDIA \u00a0H200X-141C");
        assertThat(CardCatalogs.collapseWhitespace("NVIDIA H200X-141C")).isEqualTo("NVIDIA H200X-141C");
    }
}
