package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.core.ResourceName;
import dev.vgpu.daemon.CliTest.Result;
import dev.vgpu.dra.DeviceClasses;
import dev.vgpu.dra.DriverName;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code discover --format deviceclasses} (docs/DRA.md, "The extended-resource bridge"): stdout carries exactly
 * what vgpu-dra's {@link DeviceClasses} renders for the resources {@code discover --format json} lists, with
 * {@code --dra-driver} applied; a driver name either rule refuses is exit 2 naming the rule.
 */
class DiscoverDeviceClassesTest {

    private static List<ResourceName> resources(String sample) throws Exception {
        Result json = CliTest.run("discover", "--sample", sample, "--no-nvml", "--format", "json");
        assertThat(json.code()).as(json.err()).isZero();
        List<ResourceName> names = new ArrayList<>();
        for (JsonNode r : new ObjectMapper().readTree(json.out()).path("resources")) {
            names.add(new ResourceName(r.path("resource").asText().substring("nvidia.com/".length())));
        }
        assertThat(names).isNotEmpty();
        return names;
    }

    @Test
    void oneDeviceClassPerResourceAsTheLibraryRendersItWithTheDriverGiven() throws Exception {
        for (String sample : List.of("passthrough", "h200-sriov", "a10-mdev")) {
            Result r = CliTest.run("discover", "--sample", sample, "--no-nvml", "--format", "deviceclasses",
                    "--dra-driver", "vgpu.example.com");

            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).as(sample).isEqualTo(DeviceClasses.of(new DriverName("vgpu.example.com"),
                    resources(sample)).yaml());
            assertThat(r.out()).contains("extendedResourceName: nvidia.com/", "kind: DeviceClass");
        }
    }

    @Test
    void withoutTheFlagTheDefaultDriverIsSelected() throws Exception {
        Result r = CliTest.run("discover", "--sample", "passthrough", "--no-nvml", "--format", "deviceclasses");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(DeviceClasses.of(DriverName.DEFAULT, resources("passthrough")).yaml());
    }

    @Test
    void aDriverNameThatIsNoCdiVendorIsExitTwoNamingTheRule() {
        Result r = CliTest.run("discover", "--sample", "passthrough", "--no-nvml", "--format", "deviceclasses",
                "--dra-driver", "1gpu.example.com");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("invalid --dra-driver value", "CDI vendor starts with a letter")
                .doesNotContain("Exception");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void theDriverFlagWithAnotherFormatIsAUsageError() {
        Result r = CliTest.run("discover", "--sample", "passthrough", "--no-nvml", "--dra-driver", "gpu.vgpu.dev");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--dra-driver applies to --format deviceclasses only");
    }
}
