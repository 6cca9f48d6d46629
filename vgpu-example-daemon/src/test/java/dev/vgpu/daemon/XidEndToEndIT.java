package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * XID health through the packaged jar and the compiled NVML stub: the test appends XIDs to the file the stub reads
 * (VGPU_NVML_STUB_EVENTS, see nvml_stub.c) while the daemon runs. An ignored XID is counted and changes nothing; a
 * counted one makes its GPU's device Unhealthy for the stand-in kubelet, and with {@code health.xid.recoverAfter: 1s}
 * Healthy again once NVML (the stub) still answers for the GPU. Every wait is for a state, with a generous deadline;
 * nothing measures time.
 */
class XidEndToEndIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RESOURCE = "nvidia.com/2331";
    /** The stub's cards 0 and 1 (NVML bus ids 00000000:41:00.0 and 00000000:C1:00.0). */
    private static final String GPU0 = "0000:41:00.0";
    private static final String GPU1 = "0000:c1:00.0";
    private static final Pattern PORT = Pattern.compile("metrics and probes on http://[^:]+:(\\d+)/metrics");

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aCountedXidMakesItsGpuUnhealthyUntilTheQuietPeriodPassedAnIgnoredOneIsOnlyCounted() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        SysfsTree tree = SysfsTree.at(root);
        tree.passthroughGpu(GPU0, 0x2331).iommuGroup(41).numa(0).create().addGroupNode(41);
        tree.passthroughGpu(GPU1, 0x2331).iommuGroup(42).numa(0).create().addGroupNode(42);
        Path config = Files.writeString(tmp.resolve("config.yaml"),
                "version: v1\nhealth:\n  xid:\n    recoverAfter: 1s\n");
        Path events = Files.writeString(tmp.resolve("xid-events"), "");
        Path stub = Path.of(System.getProperty("vgpu.nvml.stub"));
        assertThat(stub).as("the NVML stub the pom builds").isRegularFile();

        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             DaemonProcess daemon = DaemonProcess.startWithEnv(Map.of("VGPU_NVML_STUB_EVENTS", events.toString()),
                     DaemonProcess.jar().toString(), tmp.resolve("daemon.log"), "serve", "--host-root",
                     root.toString(), "--device-plugin-dir", dir.toString(), "--nvml-library", stub.toString(),
                     "--pci-ids", Files.writeString(tmp.resolve("pci.ids"), "").toString(), "--metrics-address",
                     "127.0.0.1:0", "--config", config.toString())) {
            kubelet.await(WAIT, k -> health(k).equals(Map.of(GPU0, true, GPU1, true)));
            awaitLog(daemon, "watching critical XID errors on GPUs");
            assertThat(daemon.output()).contains("recovery after 1s quiet");
            int port = Awaitility.await().atMost(WAIT).until(() -> port(daemon), p -> p > 0);

            // Ignored (43 is on the default list): counted, nothing marked. A counted XID of the other GPU after it
            // shows the order: had 43 marked GPU0, that mark would have reached the kubelet first.
            append(events, GPU0 + " 43\n");
            Awaitility.await().atMost(WAIT).until(() -> scrape(port).contains(
                    "vgpu_xid_events_total{gpu=\"" + GPU0 + "\",xid=\"43\"} 1.0"));
            append(events, GPU1 + " 79\n");
            kubelet.await(WAIT, k -> health(k).equals(Map.of(GPU0, true, GPU1, false)));
            assertThat(daemon.output()).contains("ignoring XID 43 on GPU " + GPU0)
                    .doesNotContain("reported critical XID 43");
            kubelet.await(WAIT, k -> health(k).equals(Map.of(GPU0, true, GPU1, true)));

            // Counted on GPU0: Unhealthy, then Healthy again once 1 s passed without another and NVML answers.
            append(events, GPU0 + " 79\n");
            kubelet.await(WAIT, k -> health(k).equals(Map.of(GPU0, false, GPU1, true)));
            kubelet.await(WAIT, k -> health(k).equals(Map.of(GPU0, true, GPU1, true)));
            awaitLog(daemon, "GPU " + GPU0 + " had no counted XID for 1s since critical XID 79 and NVML answers");
            assertThat(daemon.output()).contains("GPU " + GPU0 + " reported critical XID 79: devices " + GPU0 + " ("
                    + RESOURCE + ") are unhealthy; healthy again after 1s without another counted XID");

            String metrics = scrape(port);
            assertThat(metrics).contains("vgpu_xid_events_total{gpu=\"" + GPU0 + "\",xid=\"43\"} 1.0",
                    "vgpu_xid_events_total{gpu=\"" + GPU0 + "\",xid=\"79\"} 1.0",
                    "vgpu_xid_events_total{gpu=\"" + GPU1 + "\",xid=\"79\"} 1.0",
                    "vgpu_devices{health=\"healthy\",resource=\"" + RESOURCE + "\"} 2.0",
                    "vgpu_devices{health=\"unhealthy\",resource=\"" + RESOURCE + "\"} 0.0");

            daemon.process.destroy();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
        }
    }

    private static Map<String, Boolean> health(StandInKubelet kubelet) {
        Map<String, Boolean> out = new java.util.TreeMap<>();
        for (DeviceState d : kubelet.resources().getOrDefault(RESOURCE, List.of())) {
            out.put(d.id(), d.healthy());
        }
        return out;
    }

    private static void append(Path file, String line) throws Exception {
        Files.writeString(file, line, StandardOpenOption.APPEND);
    }

    private static int port(DaemonProcess daemon) throws Exception {
        Matcher m = PORT.matcher(daemon.output());
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    private String scrape(int port) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static void awaitLog(DaemonProcess daemon, String text) throws Exception {
        try {
            Awaitility.await().atMost(WAIT).until(() -> daemon.output().contains(text));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("no \"" + text + "\" in the daemon's output:\n" + daemon.output(), e);
        }
    }
}
