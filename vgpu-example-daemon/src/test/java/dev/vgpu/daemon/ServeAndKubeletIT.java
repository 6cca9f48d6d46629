package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README "Try it as an operator", run as written: the two {@code java} lines of its shell block (the directory and
 * the port replaced by the test's own), each the packaged jar in its own JVM, and the requests, signals and kubelet
 * restarts the section describes. What the kubelet command prints and what the probes answer are asserted; the
 * waits are hang guards.
 */
class ServeAndKubeletIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final String VF = "0000:1b:00.4";
    private static final Pattern PORT = Pattern.compile("metrics and probes on http://[^:]+:(\\d+)/metrics");
    private static final Pattern HOST_ROOT = Pattern.compile("starting: host root (\\S+),");
    private static final String README_DIR = "/tmp/dp";

    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path tmp;

    @Test
    void theReadmesCommandsShowRegistrationHealthSighupAndKubeletRestarts() throws Exception {
        List<String> block = readmeBlock();
        List<List<String>> commands = javaCommands(block);
        assertThat(commands).as("the block's java lines").hasSize(2);
        assertThat(commands.get(0).get(0)).isEqualTo("kubelet");
        assertThat(commands.get(1).get(0)).isEqualTo("serve");
        // The address the README's serve line gives (its readers curl it); this test's daemon binds port 0 instead.
        String readmeAddress = commands.get(1).get(commands.get(1).indexOf("--metrics-address") + 1);
        // The requests the block makes are the ones this test makes.
        assertThat(String.join("\n", block)).contains("curl -s " + readmeAddress + "/metrics",
                "curl -si " + readmeAddress + "/healthz", "curl -si " + readmeAddress + "/readyz", "kill -HUP %1",
                "kill %1", "mkdir -p " + README_DIR);

        Path dir = Files.createDirectories(tmp.resolve("dp"));
        String[] kubeletArgs = ours(commands.get(0), dir, readmeAddress);
        String[] serveArgs = ours(commands.get(1), dir, readmeAddress);
        DaemonProcess kubelet = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("kubelet.log"),
                kubeletArgs);
        try (DaemonProcess serve = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("serve.log"),
                serveArgs)) {
            Awaitility.await().atMost(WAIT).until(() -> kubelet.output().contains("stand-in kubelet serving "
                    + dir.resolve("kubelet.sock")));
            int port = Awaitility.await().atMost(WAIT).until(() -> port(serve), p -> p > 0);
            Awaitility.await().atMost(WAIT).until(() -> kubelet.output().contains(P118 + ": 2 devices, 2 healthy: "
                    + VF + " Healthy (NUMA node 0), 0000:1b:00.5 Healthy (NUMA node 0)"));
            assertThat(kubelet.output()).contains("register " + P118 + ": endpoint kubevirt-NVIDIA_H200X-1-18C.sock,"
                    + " API v1beta1, preferred allocation offered");
            Awaitility.await().atMost(WAIT).until(() -> get(port, "/readyz").statusCode() == 200);
            assertThat(get(port, "/healthz").body()).isEqualTo("ok\n");
            assertThat(get(port, "/metrics").body()).contains("vgpu_devices{health=\"healthy\",resource=\"" + P118
                    + "\"} 2.0", "vgpu_resource_registered{resource=\"" + P118 + "\"} 1.0", "vgpu_build_info{");

            // A device going unhealthy: its group node removed from the sample host, then put back.
            Matcher root = HOST_ROOT.matcher(serve.output());
            assertThat(root.find()).as(serve.output()).isTrue();
            Path host = Path.of(root.group(1));
            String group = Files.readSymbolicLink(host.resolve("sys/bus/pci/devices/" + VF + "/iommu_group"))
                    .getFileName().toString();
            Path node = host.resolve("dev/vfio/" + group);
            Files.delete(node);
            Awaitility.await().atMost(WAIT).until(() -> kubelet.output().contains(VF + " is Unhealthy now (was Healthy);"
                    + " 2 devices, 1 healthy"));
            assertThat(serve.output()).contains("Device " + VF + " of " + P118 + " is unhealthy: /dev/vfio/" + group
                    + " is gone");
            Files.createFile(node);
            Awaitility.await().atMost(WAIT).until(() -> kubelet.output().contains(VF + " is Healthy now (was"
                    + " Unhealthy); 2 devices, 2 healthy"));

            // SIGHUP: one rescan now.
            signal("-HUP", serve);
            Awaitility.await().atMost(WAIT).until(() -> serve.output().contains("SIGHUP: rescanning now"));

            // The kubelet restarts (Enter or SIGHUP): every resource registers again.
            signal("-HUP", kubelet);
            Awaitility.await().atMost(WAIT).until(() -> count(kubelet.output(), "register " + P118 + ":") == 2);
            assertThat(kubelet.output()).contains("restarting the kubelet (restart 1)");
            Awaitility.await().atMost(WAIT).until(() -> get(port, "/metrics").body()
                    .contains("vgpu_kubelet_restarts_total 1.0"));
            Awaitility.await().atMost(WAIT).until(() -> get(port, "/readyz").statusCode() == 200);

            // The kubelet down (Ctrl-C): not ready, naming its socket; live all the while. Back: ready again.
            kubelet.process.destroy();
            assertThat(kubelet.awaitExit(30)).as(kubelet.output()).isZero();
            assertThat(kubelet.output()).contains("stand-in kubelet stopped");
            Awaitility.await().atMost(WAIT).until(() -> get(port, "/readyz").statusCode() == 503);
            assertThat(get(port, "/readyz").body()).contains("the kubelet's socket " + dir.resolve("kubelet.sock")
                    + " is missing");
            assertThat(get(port, "/healthz").statusCode()).isEqualTo(200);
            try (DaemonProcess again = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("again.log"),
                    kubeletArgs)) {
                Awaitility.await().atMost(WAIT).until(() -> get(port, "/readyz").statusCode() == 200);
                // The kubelet command prints a Register from its own loop, after serve may have heard the answer.
                Awaitility.await().atMost(WAIT).until(() -> again.output().contains("register " + P118 + ":"));
                // Ready means registered; the device list comes over the stream the kubelet opens after that.
                Awaitility.await().atMost(WAIT).until(() -> again.output().contains(P118 + ": 2 devices, 2 healthy"));
                // One WARN per disappearance (the restart's and the stop's), one INFO per return.
                assertThat(count(serve.output(), "kubelet.sock is gone")).as(serve.output())
                        .isEqualTo(count(serve.output(), "kubelet.sock is back")).isBetween(1, 2);

                serve.process.destroy(); // kill %1
                assertThat(serve.awaitExit(30)).as(serve.output()).isZero();
                Awaitility.await().atMost(WAIT).until(() -> again.output().contains(P118
                        + ": its ListAndWatch stream ended"));
                again.process.destroy();
                assertThat(again.awaitExit(30)).as(again.output()).isZero();
            }
        } finally {
            kubelet.close();
        }
    }

    /** The README's operator block, line by line. */
    static List<String> readmeBlock() throws IOException {
        String readme = Files.readString(Path.of("../README.md"));
        int marker = readme.indexOf("<!-- operator-commands -->");
        assertThat(marker).as("the README's operator-commands marker").isPositive();
        int start = readme.indexOf("```sh\n", marker) + "```sh\n".length();
        int end = readme.indexOf("```", start);
        return Arrays.asList(readme.substring(start, end).split("\n"));
    }

    /** The arguments after {@code vgpu-daemon.jar} of every line running it (a trailing {@code &} dropped). */
    static List<List<String>> javaCommands(List<String> block) {
        List<List<String>> commands = new ArrayList<>();
        for (String line : block) {
            int jar = line.indexOf("java -jar vgpu-example-daemon/target/vgpu-daemon.jar ");
            if (line.startsWith("#") || jar < 0) {
                continue;
            }
            List<String> args = new ArrayList<>(Arrays.asList(line.substring(jar).strip().split("\\s+")).subList(3,
                    line.substring(jar).strip().split("\\s+").length));
            if (args.get(args.size() - 1).equals("&")) {
                args.remove(args.size() - 1);
            }
            commands.add(args);
        }
        return commands;
    }

    /** The README's arguments with this test's directory and a free port (0: the daemon picks, and logs it). */
    private static String[] ours(List<String> args, Path dir, String readmeAddress) {
        return args.stream().map(a -> a.equals(README_DIR) ? dir.toString()
                : a.equals(readmeAddress) ? "127.0.0.1:0" : a).toArray(String[]::new);
    }

    private static int port(DaemonProcess daemon) throws IOException {
        Matcher m = PORT.matcher(daemon.output());
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
            n++;
        }
        return n;
    }

    private static void signal(String signal, DaemonProcess process) throws Exception {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(process.process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
