package dev.vgpu.daemon.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.daemon.ops.Metrics;
import dev.vgpu.daemon.ops.OpsServer;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /readyz} over real HTTP while the kubelet goes away and comes back: 503 naming the kubelet's socket while it
 * is missing, 200 once it is back and the resource registered again. The plugin manager notices the socket by its
 * directory watch and its poll; the waits below are hang guards, not timed assertions.
 */
class DevicePluginReadinessTest {

    private static final Duration GUARD = Duration.ofSeconds(30);
    private static final String GPU = "0000:41:00.0";

    @TempDir
    Path tmp;

    @Test
    void readyzIs503WhileTheKubeletSocketIsGoneAnd200OnceItIsBackAndRegistered() throws Exception {
        SysfsTree tree = SysfsTree.at(tmp.resolve("host"));
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(41).numa(0).create().addGroupNode(41);
        Path dir = tmp.resolve("device-plugins");
        List<DeviceSource> sources = List.of(new PassthroughSource());
        Scanner scanner = new Scanner(tree.root(), PciIds.empty(), VgpuTypeResolver.none(), sources);
        StandInKubelet kubelet = StandInKubelet.start(dir);
        try (PluginManager plugins = PluginManager.builder().hostRoot(tree.root()).devicePluginDir(dir)
                     .sources(sources).healthPollInterval(Duration.ofSeconds(1)).build();
             OpsServer ops = OpsServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                     new Metrics(Clock.systemUTC()), List::of, new DevicePluginAdapter(plugins)::notReady)) {
            plugins.apply(scanner.scan(Snapshot.empty()));
            URI readyz = URI.create("http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":"
                    + ops.port() + "/readyz");
            await().atMost(GUARD).until(() -> get(readyz).statusCode() == 200);
            assertThat(get(readyz).body()).isEqualTo("ok\n");

            kubelet.close(); // the kubelet is down: kubelet.sock is deleted
            await().atMost(GUARD).until(() -> get(readyz).statusCode() == 503);
            assertThat(get(readyz).body()).isEqualTo("the kubelet's socket " + dir.resolve("kubelet.sock")
                    + " is missing: the kubelet is down or restarting (the resources stay served and register again"
                    + " once it is back)\n");
            assertThat(plugins.status()).singleElement().satisfies(s -> assertThat(s.serving()).isTrue());

            kubelet = StandInKubelet.start(dir);
            await().atMost(GUARD).until(() -> get(readyz).statusCode() == 200);
            assertThat(kubelet.registrations()).as("registered with the new kubelet").isNotEmpty();
        } finally {
            kubelet.close();
        }
    }

    private static HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).timeout(GUARD).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
