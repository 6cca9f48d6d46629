package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration file through the packaged jar: {@code discover --config} as JSON, and {@code serve} with a rename
 * the stand-in kubelet sees under the new name (socket, registration, Allocate's variable), then SIGHUP with an
 * invalid file (one WARN, nothing changes) and with a valid one (the device moves to its new name).
 */
class ConfigEndToEndIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CARD = "0000:1b:00.0";
    private static final Map<Long, String> TYPES = Map.of(1414L, "NVIDIA H200X-1-18C", 1416L, "NVIDIA H200X-2-35C");

    @TempDir
    Path tmp;

    private SysfsTree host(Path root) {
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).numa(0).virtualFunctions(4, 100).vfioCdevs(10).catalog(TYPES).create();
        tree.configureVf(SysfsTree.vfAddress(CARD, 0), 1414).configureVf(SysfsTree.vfAddress(CARD, 1), 1416);
        tree.passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).numa(0).create();
        tree.passthroughGpu("0000:c1:00.0", 0x2331).iommuGroup(42).numa(0).create();
        tree.passthroughGpu("0000:65:00.0", 0x2335).iommuGroup(43).numa(0).create();
        return tree;
    }

    @Test
    void discoverAppliesTheFileAndPrintsJsonOnly() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        host(root);
        Path config = Files.writeString(tmp.resolve("config.yaml"), """
                version: v1
                resources:
                  - match: {source: passthrough}
                    name: nvidia.com/pgpu
                exclude:
                  - address: "0000:65:00.0"
                  - profile: "NVIDIA H200X-2-35C"
                """);
        Path out = tmp.resolve("stdout.json");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
                DaemonProcess.jar().toString(), "discover", "--host-root", root.toString(), "--no-nvml", "--pci-ids",
                Files.writeString(tmp.resolve("pci.ids"), "").toString(), "--config", config.toString(), "--format",
                "json").redirectOutput(out.toFile()).redirectError(tmp.resolve("stderr.log").toFile()).start();
        assertThat(p.waitFor()).as(Files.readString(tmp.resolve("stderr.log"))).isZero();

        JsonNode doc = new ObjectMapper().readTree(out.toFile());
        assertThat(doc.get("resources")).hasSize(2);
        assertThat(doc.at("/resources/0/resource").asText()).isEqualTo("nvidia.com/NVIDIA_H200X-1-18C");
        assertThat(doc.at("/resources/1/resource").asText()).isEqualTo("nvidia.com/pgpu");
        assertThat(doc.at("/resources/1/devices").findValuesAsText("id")).containsExactly("0000:41:00.0",
                "0000:c1:00.0");
        assertThat(doc.get("skipped").toString()).contains("{\"id\":\"0000:65:00.0\",\"source\":\"passthrough\","
                + "\"reason\":\"excluded by the configuration\"}", "{\"id\":\"" + SysfsTree.vfAddress(CARD, 1)
                + "\",\"source\":\"vendor-vfio\",\"reason\":\"excluded by the configuration\"}");
        assertThat(Files.readString(tmp.resolve("stderr.log"))).contains("configuration --config " + config
                + " (1 rename rules, 2 exclusions");
    }

    @Test
    void serveAdvertisesTheNewNameAndSighupAppliesAValidFileAndKeepsTheOldOneForAnInvalidFile() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        host(root);
        Path config = Files.writeString(tmp.resolve("config.yaml"),
                "version: v1\nresources: [{match: {source: passthrough, deviceId: \"2331\"}, name: nvidia.com/pgpu}]\n");

        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("daemon.log"),
                     "serve", "--host-root", root.toString(), "--device-plugin-dir", dir.toString(), "--no-nvml",
                     "--pci-ids", Files.writeString(tmp.resolve("pci.ids"), "").toString(),
                     "--metrics-address", "", "--config", config.toString())) {
            kubelet.await(WAIT, k -> k.streaming("nvidia.com/pgpu") && ids(k, "nvidia.com/pgpu").size() == 2
                    && k.streaming("nvidia.com/2335"));
            awaitLog(daemon, "serving 4 resources");
            assertThat(ids(kubelet, "nvidia.com/pgpu")).containsExactly("0000:41:00.0", "0000:c1:00.0");
            assertThat(kubelet.registrations()).filteredOn(r -> r.resourceName().equals("nvidia.com/pgpu"))
                    .extracting(Registration::endpoint).containsOnly("kubevirt-pgpu.sock");
            assertThat(dir.resolve("kubevirt-pgpu.sock")).exists();
            assertThat(kubelet.allocation("nvidia.com/pgpu", List.of("0000:41:00.0")).envs())
                    .containsEntry("PCI_RESOURCE_NVIDIA_COM_PGPU", "0000:41:00.0");

            Files.writeString(config, "version: v1\nresources: [{match: {deviceId: \"2331\"}, name: pgpu}]\n");
            hangUp(daemon);
            awaitLog(daemon, "not applied");
            assertThat(daemon.output()).contains("WARN LiveConfig - SIGHUP: --config " + config + " not applied, the"
                    + " configuration in force stays: resources[0].name: \"pgpu\" is not a full extended-resource name");
            assertThat(ids(kubelet, "nvidia.com/pgpu")).containsExactly("0000:41:00.0", "0000:c1:00.0");

            Files.writeString(config, "version: v1\nresources: [{match: {source: passthrough}, name: nvidia.com/"
                    + "whole-gpu}]\n");
            hangUp(daemon);
            kubelet.await(WAIT, k -> ids(k, "nvidia.com/whole-gpu").size() == 3 && ids(k, "nvidia.com/pgpu").isEmpty()
                    && ids(k, "nvidia.com/2335").isEmpty());
            assertThat(ids(kubelet, "nvidia.com/whole-gpu")).containsExactly("0000:41:00.0", "0000:65:00.0",
                    "0000:c1:00.0");
            awaitLog(daemon, "Removed nvidia.com/pgpu");
            assertThat(daemon.output()).contains("applied from this round: rename rules changed, 1 -> 1",
                    "Added nvidia.com/whole-gpu");
            assertThat(count(daemon.output(), "WARN LiveConfig")).as(daemon.output()).isEqualTo(1);

            daemon.process.destroy();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
        }
    }

    private static void awaitLog(DaemonProcess daemon, String text) throws Exception {
        try {
            Awaitility.await().atMost(WAIT).until(() -> daemon.output().contains(text));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("no \"" + text + "\" in the daemon's output:\n" + daemon.output(), e);
        }
    }

    private static void hangUp(DaemonProcess daemon) throws Exception {
        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(daemon.process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            n++;
        }
        return n;
    }

    private static List<String> ids(StandInKubelet kubelet, String resource) {
        return kubelet.resources().getOrDefault(resource, List.of()).stream().map(DeviceState::id).sorted().toList();
    }
}
