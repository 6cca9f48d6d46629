package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar's {@code discover} on a host laid out as real ones are (docs/HOST-FACTS.md §1d, §1e): a GPU whose
 * IOMMU group is not viable, a GPU with its own audio function in its group, an Intel GVT-g mdev next to an NVIDIA
 * one, and an NVIDIA SR-IOV VF on vfio-pci. One {@code discover} run; each test reads one part of its answer.
 */
class RealHostRulesIT {

    static final String GVTG_UUID = "0b8e1f4c-9a3d-4c5e-8f21-7d6a5b4c3d2e";
    static final String NVIDIA_MDEV = "aa618089-8b16-4d01-a136-25a0f3c73123";

    @TempDir
    static Path tmp;
    /** Advertised device id → its resource name. */
    static final Map<String, String> advertised = new HashMap<>();
    static final Set<String> resources = new HashSet<>();
    /** Skipped id → its reason. */
    static final Map<String, String> skipped = new HashMap<>();

    @BeforeAll
    static void discover() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree tree = SysfsTree.at(root);
        // (a) an H200 whose audio sibling stays on snd_hda_intel: group 65 is not viable
        tree.passthroughGpu("0000:65:00.0", 0x2335).iommuGroup(65).numa(0).create();
        tree.function("0000:65:00.1", 0x10de, 0x22e8).pciClass(0x040300).driver("snd_hda_intel").iommuGroup(65)
                .create();
        // (b) an H200 and its audio function, both on vfio-pci in group 66, behind a bridge on pcieport
        tree.passthroughGpu("0000:66:00.0", 0x2335).iommuGroup(66).numa(0).create();
        tree.function("0000:66:00.1", 0x10de, 0x22e8).pciClass(0x040300).driver("vfio-pci").iommuGroup(66).create();
        tree.function("0000:60:01.0", 0x1022, 0x14ab).pciClass(0x060400).driver("pcieport").iommuGroup(66).create();
        // (c) Intel GVT-g on the iGPU beside an A10's mdev
        tree.function("0000:00:02.0", 0x8086, 0x3e92).pciClass(0x030000).driver("i915").create();
        tree.mdev(GVTG_UUID, "0000:00:02.0", "i915-GVTg_V5_4", "GVTg_V5_4", 3);
        tree.nvidiaGpu("0000:06:00.0", 0x2236).numa(1).create();
        tree.mdev(NVIDIA_MDEV, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        // (d) an SR-IOV card whose first VF was bound to vfio-pci
        tree.sriovCard("0000:41:00.0", 0x2335).virtualFunctions(2, 100).create();
        tree.bindDriver("0000:41:00.4", "vfio-pci");

        Path out = tmp.resolve("out.json");
        try (DaemonProcess discover = DaemonProcess.start(DaemonProcess.jar().toString(), out, "discover",
                "--format", "json", "--host-root", root.toString(), "--no-nvml")) {
            assertThat(discover.awaitExit(60)).as(discover.output()).isZero();
        }
        // stdout and stderr share the file; the JSON document is the line that starts with '{'.
        String json = Files.readAllLines(out).stream().filter(l -> l.startsWith("{")).findFirst().orElseThrow();
        JsonNode doc = new ObjectMapper().readTree(json);
        doc.get("resources").forEach(r -> {
            resources.add(r.get("resource").asText());
            r.get("devices").forEach(d -> advertised.put(d.get("id").asText(), r.get("resource").asText()));
        });
        doc.get("skipped").forEach(s -> skipped.merge(s.get("id").asText(), s.get("reason").asText(),
                (a, b) -> a + " | " + b));
    }

    @Test
    void aGpuWhoseGroupHasAFunctionOnAnotherDriverIsSkippedNamingIt() {
        assertThat(advertised).doesNotContainKeys("0000:65:00.0", "0000:65:00.1");
        assertThat(skipped.get("0000:65:00.0")).contains("IOMMU group 65", "not viable", "0000:65:00.1",
                "snd_hda_intel");
    }

    @Test
    void aGpuAndItsAudioFunctionOnVfioAreOneDeviceTheGpu() {
        assertThat(advertised).containsKey("0000:66:00.0").doesNotContainKey("0000:66:00.1");
        assertThat(skipped.get("0000:66:00.1")).contains("advertised as 0000:66:00.0");
        assertThat(skipped).doesNotContainKey("0000:66:00.0");
    }

    @Test
    void aGvtgMdevIsNotOursWhileAnNvidiaMdevIs() {
        assertThat(resources).doesNotContain("nvidia.com/GVTg_V5_4");
        assertThat(advertised).doesNotContainKey(GVTG_UUID).containsEntry(NVIDIA_MDEV, "nvidia.com/NVIDIA_A10-8Q");
        assertThat(skipped).doesNotContainKey(GVTG_UUID);
    }

    @Test
    void anNvidiaVfOnVfioPciIsNotAdvertisedAsAWholeGpu() {
        assertThat(advertised).doesNotContainKey("0000:41:00.4");
        assertThat(skipped.get("0000:41:00.4")).contains("SR-IOV virtual function", "physfn → 0000:41:00.0",
                "not a whole GPU");
    }
}
