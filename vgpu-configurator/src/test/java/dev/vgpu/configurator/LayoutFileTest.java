package dev.vgpu.configurator;

import static dev.vgpu.configurator.SimulatedHost.at;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.configurator.file.LayoutDemands;
import dev.vgpu.configurator.file.VgpuConfigFile;
import dev.vgpu.configurator.inuse.KubeletCheckpoint;
import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.testing.SimulatedCard;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A vgpu-device-manager file, through selection and the applier, on the simulator; the report's counts. */
class LayoutFileTest {

    static final String A = "0000:41:00.0";
    static final String B = "0000:81:00.0";
    static final String FILE = """
            version: v1
            vgpu-configs:
              default:
                - devices: all
                  vgpu-devices: {"L40S-12Q": 2}
              split:
                - devices: [0]
                  vgpu-devices: {"NVIDIA L40S-24Q": 1}
                - devices: [1]
                  device-filter: "0x26B910DE"
                  vgpu-devices: {"L40S-4Q": 3}
              mixed:
                - devices: [0]
                  vgpu-devices: {"L40S-12Q": 1, "L40S-24Q": 1}
                - devices: [1]
                  vgpu-devices: {"L40S-99Q": 1}
            """;

    @TempDir
    Path root;

    SimulatedHost host() {
        return new SimulatedHost(root, SimulatedCard.l40s(A).withTotalVfs(4),
                SimulatedCard.l40s(B).withTotalVfs(4).withEnabledVfs(0));
    }

    static LayoutDemands demands(SimulatedHost host, String name) throws Exception {
        return VgpuConfigFile.parse(FILE).select(name).demands(SysfsVgpuHost.at(host.root).read(Set.of()));
    }

    @Test
    void aSelectedLayoutIsAppliedOnEveryCardItNamesAndCountedForMetrics() throws Exception {
        SimulatedHost host = host();

        ApplyReport report = host.applier().apply(demands(host, "split").demands(), InUse.none());

        assertThat(report.hostMatches()).isTrue();
        assertThat(report.results()).isEqualTo(Map.of("applied", 2));
        assertThat(report.vgpusByProfile()).isEqualTo(Map.of("NVIDIA L40S-24Q", 1, "NVIDIA L40S-4Q", 3));
        assertThat(report.vgpus()).isEqualTo(Map.of(at(A), Map.of("NVIDIA L40S-24Q", 1), at(B),
                Map.of("NVIDIA L40S-4Q", 3)));

        ApplyReport again = host.applier(report.typeNames()).apply(demands(host, "split").demands(), InUse.none());
        assertThat(again.results()).isEqualTo(Map.of("unchanged", 2));
        assertThat(again.writes()).isZero();
        assertThat(again.vgpusByProfile()).isEqualTo(report.vgpusByProfile());
    }

    @Test
    void mixedSizesAndAnUnknownProfileAreRefusedNamingCardAndProfile() throws Exception {
        SimulatedHost host = host();
        long before = host.simulator.writeAttempts();

        ApplyReport report = host.applier().apply(demands(host, "mixed").demands(), InUse.none());

        assertThat(report.results()).isEqualTo(Map.of("refused", 2));
        CardOutcome.Refused mixed = (CardOutcome.Refused) report.cards().get(0);
        assertThat(mixed.has(CardRefusal.Kind.MIXED_SIZES)).isTrue();
        assertThat(mixed.describe()).contains("card " + A, "L40S-12Q\"", "L40S-24Q\"");
        CardOutcome.Refused unknown = (CardOutcome.Refused) report.cards().get(1);
        assertThat(unknown.has(CardRefusal.Kind.UNKNOWN_PROFILE)).isTrue();
        assertThat(unknown.describe()).contains("card " + B + " has no vGPU profile \"L40S-99Q\"");
        // Neither card was written: B's PF lists its types, so its VFs were not even enabled to read them.
        assertThat(host.simulator.vfCount(B)).isZero();
        assertThat(host.vgpus(A).values()).containsOnly(0L);
        assertThat(host.simulator.writeAttempts()).isEqualTo(before);
    }

    @Test
    void aVfTheKubeletAllocatedIsLeftAloneAndItsCardRefused() throws Exception {
        SimulatedHost host = host();
        ApplyReport first = host.applier().apply(demands(host, "default").demands(), InUse.none());
        Path deviceDir = Files.createDirectories(root.resolve("device-plugins"));
        Files.writeString(deviceDir.resolve(KubeletCheckpoint.FILE), "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":"
                + "\"p\",\"ContainerName\":\"compute\",\"ResourceName\":\"nvidia.com/NVIDIA_L40S-12Q\",\"DeviceIDs\":"
                + "{\"0\":[\"0000:41:00.4\"]},\"AllocResp\":\"\"}],\"RegisteredDevices\":{}},\"Checksum\":1}");

        // A card holding vGPUs lists only what fits beside them: the names the first run read name the rest.
        ApplyReport report = host.applier(first.typeNames()).apply(demands(host, "split").demands(),
                KubeletCheckpoint.in(deviceDir));

        CardOutcome.Refused refused = (CardOutcome.Refused) report.cards().get(0);
        assertThat(refused.has(CardRefusal.Kind.VF_IN_USE)).isTrue();
        assertThat(refused.describe()).contains("0000:41:00.4");
        assertThat(host.vgpus(A).get("0000:41:00.4")).isEqualTo(1153L);
        assertThat(report.cards().get(1)).isInstanceOf(CardOutcome.Applied.class);
        assertThat(report.results()).isEqualTo(Map.of("applied", 1, "refused", 1));
    }

    @Test
    void aCorruptCheckpointWritesNothing() throws Exception {
        SimulatedHost host = host();
        Path deviceDir = Files.createDirectories(root.resolve("device-plugins"));
        Files.writeString(deviceDir.resolve(KubeletCheckpoint.FILE), "{\"Data\":");
        long before = host.simulator.writeAttempts();

        ApplyReport report = host.applier().apply(demands(host, "default").demands(),
                KubeletCheckpoint.in(deviceDir));

        assertThat(report.results()).isEqualTo(Map.of("refused", 2));
        assertThat(report.cards().get(0).describe()).contains("which VFs are in use cannot be told");
        assertThat(host.simulator.writeAttempts()).isEqualTo(before);
    }
}
