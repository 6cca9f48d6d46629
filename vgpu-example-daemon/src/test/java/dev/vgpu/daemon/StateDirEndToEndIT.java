package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar with {@code --no-nvml --state-dir}: what one life of the daemon learned names a card that filled
 * up before the next life starts, as the stand-in kubelet sees it; after a driver upgrade it does not, as
 * {@code discover} (which only reads the state directory) shows.
 */
class StateDirEndToEndIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String VF0 = SysfsTree.vfAddress(CARD, 0);
    private static final String VF1 = SysfsTree.vfAddress(CARD, 1);
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final String P235 = "nvidia.com/NVIDIA_H200X-2-35C";
    private static final Map<Long, String> TYPES = Map.of(1414L, "NVIDIA H200X-1-18C", 1416L, "NVIDIA H200X-2-35C");
    private static final Duration START = Duration.ofSeconds(60);

    @TempDir
    Path tmp;
    Path root;
    Path plugins;
    Path state;
    Path pciIds;

    /** One life of {@code serve}: until the kubelet sees {@code expected}, then SIGTERM; returns its output. */
    String serveUntil(String life, Map<String, List<String>> expected) throws Exception {
        try (StandInKubelet kubelet = StandInKubelet.start(plugins);
             DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve(life + ".log"),
                     "serve", "--host-root", root.toString(), "--device-plugin-dir", plugins.toString(),
                     "--pci-ids", pciIds.toString(), "--metrics-address", "", "--no-nvml",
                     "--state-dir", state.toString())) {
            kubelet.await(START, k -> ids(k).equals(expected) && expected.keySet().stream().allMatch(k::streaming));
            daemon.process.destroy();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            return daemon.output();
        }
    }

    static Map<String, List<String>> ids(StandInKubelet kubelet) {
        Map<String, List<String>> ids = new TreeMap<>();
        kubelet.resources().forEach((resource, devices) -> {
            if (!devices.isEmpty()) {
                ids.put(resource, devices.stream().map(DeviceState::id).sorted().toList());
            }
        });
        return ids;
    }

    @Test
    void aCardThatFilledUpIsAdvertisedAfterARestartUntilTheDriverChanges() throws Exception {
        root = Files.createDirectories(tmp.resolve("host"));
        plugins = Files.createDirectories(tmp.resolve("device-plugins"));
        state = tmp.resolve("var/lib/vgpu");
        pciIds = Files.createFile(tmp.resolve("empty-pci.ids"));
        SysfsTree tree = SysfsTree.at(root).nvidiaDriverVersion("550.54.14");
        tree.sriovCard(CARD, 0x2335).numa(0).virtualFunctions(2, 100).catalog(TYPES).create();
        tree.configureVf(VF0, 1414);

        String first = serveUntil("first", Map.of(P118, List.of(VF0)));
        assertThat(first).contains("state dir " + state);
        Path file = state.resolve("vendor-vfio-names.v1");
        assertThat(file).isRegularFile();

        // While the daemon is down the last VF gets a vGPU: every catalog of the card drops to its header.
        tree.configureVf(VF1, 1416).rewriteCardCatalogs(CARD, Map.of());
        String second = serveUntil("second", new TreeMap<>(Map.of(P118, List.of(VF0), P235, List.of(VF1))));
        assertThat(second).contains("naming vGPU type 1414 \"NVIDIA H200X-1-18C\" as learned earlier from the state"
                + " file " + file);
        byte[] kept = Files.readAllBytes(file);

        tree.nvidiaDriverVersion("550.90.07");
        JsonNode upgraded = discoverJson();
        assertThat(upgraded.get("resources")).isEmpty();
        Map<String, String> skipped = new TreeMap<>();
        upgraded.get("skipped").forEach(s -> skipped.put(s.get("id").asText(), s.get("reason").asText()));
        assertThat(skipped).containsOnlyKeys(VF0, VF1).allSatisfy((vf, reason) -> assertThat(reason)
                .contains("no name was learned for it on this card earlier"));
        assertThat(Files.readAllBytes(file)).as("discover only reads the state directory").isEqualTo(kept);
    }

    /** {@code discover --format json} of the tree with the state directory; stdout is the document alone. */
    JsonNode discoverJson() throws Exception {
        Path out = tmp.resolve("discover.json");
        Path err = tmp.resolve("discover.log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", DaemonProcess.jar().toString(),
                "discover", "--host-root", root.toString(), "--pci-ids", pciIds.toString(), "--no-nvml",
                "--format", "json", "--state-dir", state.toString()));
        Process discover = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            assertThat(discover.waitFor(60, TimeUnit.SECONDS)).as("discover finished").isTrue();
            assertThat(discover.exitValue()).as(Files.readString(err)).isZero();
        } finally {
            discover.destroyForcibly();
        }
        return new ObjectMapper().readTree(out.toFile());
    }
}
