package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ResourceName;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The DeviceClasses of the extended-resource bridge (docs/DRA.md, "The extended-resource bridge"): one per resource,
 * named by the contract's rule, selecting the driver's devices by their {@code resourceName} attribute, with
 * {@code extendedResourceName} set. ({@code DeviceClassObjectsTest} in vgpu-dra-apiserver reads them as
 * {@code resource.k8s.io/v1} objects.)
 */
class DeviceClassesTest {

    @Test
    void oneClassPerResourceSortedWithTheContractsNameSelectorAndExtendedResourceName() {
        DeviceClasses.Rendered rendered = DeviceClasses.of(DriverName.DEFAULT, List.of(
                new ResourceName("NVIDIA_L40S-1Q"), new ResourceName("GH100_H200.SXM_141GB")));

        assertThat(rendered.skipped()).isEmpty();
        assertThat(rendered.yaml()).isEqualTo("""
                apiVersion: resource.k8s.io/v1
                kind: DeviceClass
                metadata:
                  name: gh100-h200-sxm-141gb.gpu.vgpu.dev
                spec:
                  selectors:
                  - cel:
                      expression: "device.driver == 'gpu.vgpu.dev' && device.attributes['gpu.vgpu.dev'].resourceName \
                == 'nvidia.com/GH100_H200.SXM_141GB'"
                  extendedResourceName: nvidia.com/GH100_H200.SXM_141GB
                ---
                apiVersion: resource.k8s.io/v1
                kind: DeviceClass
                metadata:
                  name: nvidia-l40s-1q.gpu.vgpu.dev
                spec:
                  selectors:
                  - cel:
                      expression: "device.driver == 'gpu.vgpu.dev' && device.attributes['gpu.vgpu.dev'].resourceName \
                == 'nvidia.com/NVIDIA_L40S-1Q'"
                  extendedResourceName: nvidia.com/NVIDIA_L40S-1Q
                """);
    }

    @Test
    void theDriverNameAppliesToTheNameAndTheSelector() {
        DeviceClasses.Rendered rendered = DeviceClasses.of(new DriverName("vgpu.example.com"),
                List.of(new ResourceName("2330")));

        assertThat(rendered.classes()).extracting(DeviceClasses.DeviceClass::name)
                .containsExactly("2330.vgpu.example.com");
        assertThat(rendered.yaml()).contains("device.driver == 'vgpu.example.com' && device.attributes["
                + "'vgpu.example.com'].resourceName == 'nvidia.com/2330'");
    }

    @Test
    void resourcesThatWouldShareANameGetDistinctNames() {
        DeviceClasses.Rendered rendered = DeviceClasses.of(DriverName.DEFAULT, List.of(new ResourceName("A_B"),
                new ResourceName("A.B"), new ResourceName("a-b")));

        assertThat(rendered.classes()).extracting(DeviceClasses.DeviceClass::name).doesNotHaveDuplicates()
                .allMatch(n -> n.matches("[a-z0-9]([a-z0-9.-]*[a-z0-9])?") && n.endsWith(".gpu.vgpu.dev"))
                .contains("a-b.gpu.vgpu.dev");
    }

    @Test
    void aResourceWhoseNameDoesNotFitTheAttributeGetsNoClassAndAReason() {
        ResourceName longest = new ResourceName("X".repeat(63));

        DeviceClasses.Rendered rendered = DeviceClasses.of(DriverName.DEFAULT, List.of(longest,
                new ResourceName("NVIDIA_L40S-1Q")));

        assertThat(rendered.classes()).extracting(DeviceClasses.DeviceClass::resource)
                .containsExactly(new ResourceName("NVIDIA_L40S-1Q"));
        assertThat(rendered.skipped()).singleElement().satisfies(s -> assertThat(s)
                .contains(longest.fullName(), "74 bytes", "resourceName"));
        assertThat(DeviceClasses.of(DriverName.DEFAULT, List.of()).yaml()).isEmpty();
    }
}
