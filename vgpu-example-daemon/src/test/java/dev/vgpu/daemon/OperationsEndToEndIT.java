package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.daemon.fixture.HoldingSource;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operations of the packaged jar in its own JVM: metrics scraped over HTTP and checked against what the test did
 * (registrations, an Allocate that succeeds and one that is refused, a SIGHUP rescan with periodic rescans off, a
 * kubelet restart), {@code /readyz} flipping when the kubelet appears, {@code /healthz} failing while a scan is
 * held past its deadline.
 */
@Tag("reliability")
class OperationsEndToEndIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern PORT = Pattern.compile("metrics and probes on http://[^:]+:(\\d+)/metrics");
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    @TempDir
    Path tmp;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void metricsProbesAndSighupOfAServingDaemon() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).numa(0).virtualFunctions(4, 100)
                .catalog(Map.of(1414L, "NVIDIA H200X-1-18C")).create();
        String vf0 = SysfsTree.vfAddress(CARD, 0);
        String vf1 = SysfsTree.vfAddress(CARD, 1);
        tree.configureVf(vf0, 1414);
        for (int group = 100; group < 104; group++) {
            tree.addGroupNode(group);
        }
        Path pciIds = Files.writeString(tmp.resolve("pci.ids"), "");
        Path holding = DaemonProcess.sourceJar(tmp.resolve("holding.jar"), HoldingSource.class);

        try (DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar() + File.pathSeparator + holding,
                tmp.resolve("daemon.log"), "serve", "--host-root", root.toString(), "--device-plugin-dir",
                dir.toString(), "--pci-ids", pciIds.toString(), "--no-nvml", "--metrics-address", "127.0.0.1:0",
                "--scan-deadline", "1s")) {
            int port = Awaitility.await().atMost(WAIT).until(() -> port(daemon), p -> p > 0);
            Awaitility.await().atMost(WAIT).until(() -> daemon.output().contains("serving 1 resources"));

            // A second daemon on the same directory is refused before it touches a socket.
            try (DaemonProcess second = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("second.log"),
                    "serve", "--host-root", root.toString(), "--device-plugin-dir", dir.toString(), "--pci-ids",
                    pciIds.toString(), "--no-nvml", "--metrics-address", "")) {
                assertThat(second.awaitExit(60)).as(second.output()).isEqualTo(2);
                assertThat(second.output()).contains("another vgpu daemon is already serving " + dir);
            }

            // No kubelet yet: served but not registered, so live and not ready.
            assertThat(get(port, "/healthz")).isEqualTo(200);
            assertThat(get(port, "/readyz")).isEqualTo(503);
            assertThat(body(port, "/readyz")).contains(P118 + " is not registered with the kubelet");

            try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
                kubelet.await(WAIT, k -> k.streaming(P118));
                Awaitility.await().atMost(WAIT).until(() -> get(port, "/readyz") == 200);

                kubelet.allocate(P118, List.of(vf0));
                assertThatThrownBy(() -> kubelet.allocate(P118, List.of("0000:99:00.0")))
                        .hasMessageContaining("INVALID_ARGUMENT");

                // Periodic rescans are off: SIGHUP alone brings the new VF.
                tree.configureVf(vf1, 1414);
                hangUp(daemon);
                kubelet.await(WAIT, k -> ids(k).equals(List.of(vf0, vf1)));

                kubelet.restart();
                kubelet.await(WAIT, k -> k.streaming(P118));
                Awaitility.await().atMost(WAIT).until(() -> metric(port, "vgpu_kubelet_restarts_total", Map.of()),
                        v -> v == 1.0);
                // The stand-in opens its stream before it answers Register: the daemon counts the registration when
                // that answer reaches it, a moment later.
                // Awaited on the gauge; the exact counts below say what they are if they are wrong.
                Awaitility.await().atMost(WAIT).until(() -> metric(port, "vgpu_resource_registered",
                        Map.of("resource", P118)) == 1.0 && metric(port, "vgpu_registrations_total",
                        Map.of("resource", P118)) >= 2.0);

                Map<String, Map<Map<String, String>, Double>> m = scrape(port);
                System.out.println("example scrape:\n" + body(port, "/metrics"));
                assertThat(m.get("vgpu_allocate_requests_total"))
                        .containsEntry(Map.of("resource", P118, "code", "OK"), 1.0)
                        .containsEntry(Map.of("resource", P118, "code", "INVALID_ARGUMENT"), 1.0);
                assertThat(m.get("vgpu_allocate_duration_seconds_count")).containsEntry(Map.of("resource", P118), 2.0);
                assertThat(m.get("vgpu_registrations_total")).containsEntry(Map.of("resource", P118), 2.0);
                assertThat(m.get("vgpu_resource_registered")).containsEntry(Map.of("resource", P118), 1.0);
                assertThat(m.get("vgpu_devices")).containsEntry(Map.of("resource", P118, "health", "healthy"), 2.0)
                        .containsEntry(Map.of("resource", P118, "health", "unhealthy"), 0.0);
                assertThat(m.get("vgpu_scans_total")).containsEntry(Map.of("result", "ok"), 2.0)
                        .containsEntry(Map.of("result", "failed"), 0.0);
                assertThat(m.get("vgpu_scan_duration_seconds_count")).containsEntry(Map.of(), 2.0);
                assertThat(m.get("vgpu_scan_last_success_timestamp_seconds").get(Map.of())).isPositive();
                assertThat(m.get("vgpu_rescan_requests_total")).containsEntry(Map.of(), 1.0);
                assertThat(m.get("vgpu_nvml_available")).containsEntry(Map.of(), 0.0);
                Map<Map<String, String>, Double> buildInfo = m.get("vgpu_build_info");
                assertThat(buildInfo).hasSize(1).containsValue(1.0);
                assertThat(buildInfo.keySet().iterator().next())
                        .containsEntry("version", System.getProperty("vgpu.version")).containsKey("pciids");
                assertThat(daemon.output()).contains("vgpu daemon " + System.getProperty("vgpu.version") + " starting");
                assertThat(daemon.output()).as("started without nohup, SIGHUP is handled").doesNotContain("SIGHUP is"
                        + " ignored");
                assertThat(m.get("vgpu_skipped_devices")).isNull();

                // A scan held past its 1 s deadline fails liveness, and passes again once it finishes.
                tree.writeFile("etc/hold-scan", "");
                hangUp(daemon);
                Awaitility.await().atMost(WAIT).until(() -> get(port, "/healthz") == 503);
                assertThat(body(port, "/healthz")).contains("longer than its deadline 1s");
                Files.delete(root.resolve("etc/hold-scan"));
                Awaitility.await().atMost(WAIT).until(() -> get(port, "/healthz") == 200);
            }
            daemon.process.destroy();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
        }
    }

    private static int port(DaemonProcess daemon) throws Exception {
        Matcher m = PORT.matcher(daemon.output());
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    private static void hangUp(DaemonProcess daemon) throws Exception {
        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(daemon.process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    private static List<String> ids(StandInKubelet kubelet) {
        return kubelet.resources().getOrDefault(P118, List.of()).stream().map(DeviceState::id).sorted().toList();
    }

    private HttpResponse<String> request(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private int get(int port, String path) throws Exception {
        return request(port, path).statusCode();
    }

    private String body(int port, String path) throws Exception {
        return request(port, path).body();
    }

    private double metric(int port, String name, Map<String, String> labels) throws Exception {
        return scrape(port).getOrDefault(name, Map.of()).getOrDefault(labels, Double.NaN);
    }

    /** Metric name → label set → value, parsed from the text format. */
    private Map<String, Map<Map<String, String>, Double>> scrape(int port) throws Exception {
        HttpResponse<String> response = request(port, "/metrics");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        Map<String, Map<Map<String, String>, Double>> out = new TreeMap<>();
        for (String line : response.body().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            assertThat(sample.matches()).as("a sample line: " + line).isTrue();
            Map<String, String> labels = new TreeMap<>();
            if (sample.group(3) != null) {
                Matcher label = LABEL.matcher(sample.group(3));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            out.computeIfAbsent(sample.group(1), k -> new java.util.HashMap<>()).put(Map.copyOf(labels),
                    Double.parseDouble(sample.group(4)));
        }
        return out;
    }
}
