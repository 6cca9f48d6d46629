package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ResourceName;
import dev.vgpu.dra.DeviceClasses;
import dev.vgpu.dra.DriverName;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bridge's DeviceClasses ({@link DeviceClasses}) read as {@code resource.k8s.io/v1} objects by fabric8's model of
 * the API: every document is a DeviceClass with a DNS-subdomain name, one CEL selector and
 * {@code extendedResourceName} set to the resource.
 */
class DeviceClassObjectsTest {

    @Test
    void everyDocumentIsADeviceClassTheApiModelReads() {
        List<ResourceName> resources = List.of(new ResourceName("NVIDIA_L40S-8Q"), new ResourceName("GRID_T4-1Q"),
                new ResourceName("2330"));

        String yaml = DeviceClasses.of(new DriverName("vgpu.example.com"), resources).yaml();

        List<DeviceClass> classes = Arrays.stream(yaml.split("(?m)^---\\n"))
                .map(doc -> Serialization.unmarshal(doc, DeviceClass.class)).toList();
        assertThat(classes).hasSize(3).allSatisfy(c -> {
            assertThat(c.getApiVersion()).isEqualTo("resource.k8s.io/v1");
            assertThat(c.getKind()).isEqualTo("DeviceClass");
            assertThat(c.getMetadata().getName()).hasSizeLessThanOrEqualTo(253)
                    .matches("[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")
                    .endsWith(".vgpu.example.com");
            assertThat(c.getSpec().getSelectors()).singleElement().satisfies(s -> assertThat(s.getCel()
                    .getExpression()).startsWith("device.driver == 'vgpu.example.com' && ")
                    .endsWith(".resourceName == '" + c.getSpec().getExtendedResourceName() + "'"));
        });
        assertThat(classes).extracting(c -> c.getSpec().getExtendedResourceName())
                .containsExactly("nvidia.com/2330", "nvidia.com/GRID_T4-1Q", "nvidia.com/NVIDIA_L40S-8Q");
    }
}
