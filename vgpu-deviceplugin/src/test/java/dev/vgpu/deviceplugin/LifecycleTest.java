package dev.vgpu.deviceplugin;

import dev.vgpu.attach.Handovers;
import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.L40S_2Q;
import static dev.vgpu.deviceplugin.Fixtures.T4_1Q;
import static dev.vgpu.deviceplugin.Fixtures.mdev;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.SerialContext;
import dev.vgpu.core.spi.Host;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Start, stop and restart serialized per plugin, and every thread they start gone when they stop. */
@Tag("reliability")
class LifecycleTest {

    private static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 100, unit = TimeUnit.SECONDS)
    void stopRacingRestartThousandTimesLeavesNoServerSocketStreamOrTask() throws Exception {
        Path dir = tmp.resolve("dp");
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2);
        scheduler.setRemoveOnCancelPolicy(true);
        ExecutorService racers = Executors.newFixedThreadPool(2);
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             UnixDomainTransport kubeletClient = UnixDomainTransport.create("race-client", 1, 1)) {
            Snapshot snapshot = snapshot(passthrough("0000:41:00.0", 41, 0));
            SerialContext context = new SerialContext("race", scheduler);
            PluginEnvironment env = new PluginEnvironment(Handovers.forHost(Host.of(tmp.resolve("host")), List.of()),
                    dir, () -> snapshot,
                    context, scheduler, new KubeletSocket(dir.resolve("kubelet.sock"), PluginObserver.NONE),
                    kubeletClient, Duration.ofMillis(5), Duration.ofMillis(50), d -> false,
                    PluginObserver.NONE, InstantSource.system());
            CyclicBarrier go = new CyclicBarrier(2);
            for (int i = 0; i < 1_000; i++) {
                ResourcePlugin plugin = context.call(() -> {
                    ResourcePlugin p = new ResourcePlugin(snapshot.resource(H200).orElseThrow(), env);
                    p.start();
                    return p;
                });
                Future<?> restart = racers.submit(() -> {
                    go.await();
                    context.call(() -> {
                        plugin.restart("race");
                        return null;
                    });
                    return null;
                });
                Future<?> stop = racers.submit(() -> {
                    go.await();
                    context.call(plugin::stop).run();
                    return null;
                });
                restart.get(20, TimeUnit.SECONDS);
                stop.get(20, TimeUnit.SECONDS);
                assertThat(context.call(plugin::isRunning)).isFalse();
                assertThat(plugin.socket().orElseThrow()).doesNotExist();
                assertThat(context.call(plugin::openStreams)).isZero();
            }
            // Nothing of the plugins is left to run: no registration retry, no restart.
            await().atMost(Harness.WAIT).until(() -> scheduler.getQueue().isEmpty()
                    && scheduler.getActiveCount() == 0);
            assertThat(socketsIn(dir)).containsExactly("kubelet.sock");
            assertThat(kubelet.streaming(H200.fullName())).isFalse();
        } finally {
            racers.shutdownNow();
            scheduler.shutdownNow();
        }
    }

    @Test
    void threadsAreBackToTheBaselineAfterRemovingPluginsAndNoneAfterClose() {
        Snapshot three = snapshot(passthrough("0000:41:00.0", 41, 0), vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0",
                100, 0), vf(L40S_2Q, "0000:1b:00.5", "0000:1b:00.0", 101, 0), mdev(UUID, "0000:06:00.0", 7, 0));
        try (Harness h = Harness.start(tmp)) {
            cycle(h, three);
            long baseline = h.threads.alive();
            int made = h.threads.made();

            h.apply(three);
            h.await(k -> k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName())
                    && k.streaming(L40S_2Q.fullName()) && k.streaming(T4_1Q.fullName()));
            assertThat(h.threads.aliveNames()).as("the one transport serves every plugin")
                    .anyMatch(n -> n.startsWith("vgpu-dp-grpc-"));
            assertThat(h.threads.made()).as("no plugin has a thread of its own: %s", h.threads.aliveNames())
                    .isEqualTo(made);
            h.apply(Snapshot.empty());

            await().atMost(Harness.WAIT).untilAsserted(() -> assertThat(h.threads.alive())
                    .as("threads now %s", h.threads.aliveNames()).isEqualTo(baseline));
            h.manager.close();
            // close waited for every pool; a thread may still be on its last instructions.
            await().atMost(Harness.WAIT).untilAsserted(() -> assertThat(h.threads.aliveNames())
                    .as("threads the manager was given, alive after close").isEmpty());
        }
    }

    @Test
    void threadsStayConstantAsResourcesGrow() {
        Snapshot one = snapshot(passthrough("0000:41:00.0", 41, 0));
        Snapshot four = snapshot(passthrough("0000:41:00.0", 41, 0), vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0",
                100, 0), vf(L40S_2Q, "0000:1b:00.5", "0000:1b:00.0", 101, 0), mdev(UUID, "0000:06:00.0", 7, 0));
        try (Harness h = Harness.start(tmp)) {
            cycle(h, four);
            h.apply(one);
            h.await(k -> k.streaming(H200.fullName()));
            long withOne = h.threads.alive();

            h.apply(four);
            h.await(k -> k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName())
                    && k.streaming(L40S_2Q.fullName()) && k.streaming(T4_1Q.fullName()));
            assertThat(h.threads.alive()).as("threads now %s", h.threads.aliveNames()).isEqualTo(withOne);
        }
    }

    /**
     * Adds and removes everything once, so the transport's lazily started threads (its event loop, both call
     * threads) exist. Only threads the manager was given are counted: the JVM's, the test tools' and the stand-in
     * kubelet's come and go on their own schedule.
     */
    private static void cycle(Harness h, Snapshot snapshot) {
        h.apply(snapshot);
        h.await(k -> k.streaming(H200.fullName()));
        h.apply(Snapshot.empty());
        h.await(k -> !k.streaming(H200.fullName()));
    }

    private static List<String> socketsIn(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
