package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.daemon.fixture.LabSource;
import dev.vgpu.testing.SysfsTree;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A user's DeviceSource in its own jar on the class path is found by ServiceLoader and used by discover. */
class CustomSourceIT {

    @TempDir
    Path tmp;

    @Test
    void aSourceJarOnTheClassPathIsPickedUpByDiscover() throws Exception {
        Path jar = DaemonProcess.sourceJar(tmp.resolve("lab-source.jar"), LabSource.class);
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree tree = SysfsTree.at(root);
        tree.function("0000:65:00.0", 0x1af4, 0x1041).driver("vfio-pci").iommuGroup(7).create();
        tree.writeFile("etc/lab-gpus", "0000:65:00.0\n0000:66:00.0\n");

        try (DaemonProcess discover = DaemonProcess.start(DaemonProcess.jar() + File.pathSeparator + jar,
                tmp.resolve("out.json"), "discover", "--format", "json", "--host-root", root.toString(), "--no-nvml")) {
            assertThat(discover.awaitExit(60)).isZero();
        }
        // stdout and stderr share the file here; the JSON document is the line that starts with '{'.
        String json = Files.readAllLines(tmp.resolve("out.json")).stream().filter(l -> l.startsWith("{"))
                .findFirst().orElseThrow();
        JsonNode doc = new ObjectMapper().readTree(json);
        assertThat(doc.get("resources").get(0).get("resource").asText()).isEqualTo("nvidia.com/LAB_GPU");
        assertThat(doc.get("resources").get(0).get("source").asText()).isEqualTo("lab");
        assertThat(doc.get("resources").get(0).get("devices").get(0).get("iommuGroup").asText()).isEqualTo("7");
        assertThat(doc.get("skipped").get(0).get("id").asText()).isEqualTo("0000:66:00.0");
        assertThat(Files.readString(tmp.resolve("out.json"))).contains("sources [passthrough, mdev, vendor-vfio, lab]");
    }
}
