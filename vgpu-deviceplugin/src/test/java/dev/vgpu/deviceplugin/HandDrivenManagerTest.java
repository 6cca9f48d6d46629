package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.testsupport.FakeScheduler;
import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.core.PciAddress;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.RegisterRequest;
import dev.vgpu.kubelet.api.v1beta1.RegistrationGrpc;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.testing.SysfsTree;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manager on a scheduler the test drives by hand ({@link FakeScheduler}): timers fire only when the test moves
 * the clock, and a mark posted from the test's thread has reached the plugins by the time a later context task runs.
 */
class HandDrivenManagerTest {

    private static final Duration NO_POLL = Duration.ofHours(1);

    @TempDir
    Path tmp;

    /** A kubelet that answers every Register call with UNAVAILABLE and counts them. */
    static final class RefusingKubelet implements AutoCloseable {
        final AtomicInteger calls = new AtomicInteger();
        private final UnixDomainTransport transport = UnixDomainTransport.create("refusing-kubelet", 1, 1);
        private final Server server;

        RefusingKubelet(Path dir) throws Exception {
            server = transport.serve(dir.resolve("kubelet.sock"), List.of(new RegistrationGrpc.RegistrationImplBase() {
                @Override
                public void register(RegisterRequest request, StreamObserver<Empty> response) {
                    calls.incrementAndGet();
                    response.onError(Status.UNAVAILABLE.withDescription("not now").asRuntimeException());
                }
            }));
        }

        @Override
        public void close() {
            server.shutdownNow();
            transport.close();
        }
    }

    @Test
    void registrationRetriesWaitOnTheInjectedClockDoublingUpToTheCap() throws Exception {
        FakeScheduler clock = new FakeScheduler();
        Path dir = Files.createDirectories(tmp.resolve("dp"));
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        try (RefusingKubelet kubelet = new RefusingKubelet(dir);
             PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir)
                     .healthPollInterval(NO_POLL).registrationBackoff(Duration.ofSeconds(1), Duration.ofSeconds(8))
                     .scheduler(clock).build()) {
            manager.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));

            List<Duration> waits = List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4),
                    Duration.ofSeconds(8), Duration.ofSeconds(8));
            for (int i = 0; i < waits.size(); i++) {
                int calls = i + 1;
                // The refusal arrives on a gRPC thread and posts the next try to the context.
                await().atMost(Harness.WAIT).until(() -> kubelet.calls.get() == calls && retries(clock).size() == 1);
                assertThat(retries(clock)).containsExactly(waits.get(i));

                clock.forward(waits.get(i).minusMillis(1));
                assertThat(retries(clock)).as("still waiting").containsExactly(Duration.ofMillis(1));
                assertThat(kubelet.calls).hasValue(calls);
                clock.forward(Duration.ofMillis(1));
            }
            await().atMost(Harness.WAIT).until(() -> kubelet.calls.get() == waits.size() + 1);
            assertThat(manager.status()).extracting(ResourceStatus::registered).containsExactly(false);
        }
    }

    @Test
    void anXidMarkHasReachedThePluginByTheNextContextTaskWithNoTimerMoved() throws Exception {
        FakeScheduler clock = new FakeScheduler();
        Path dir = tmp.resolve("dp");
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create().addGroupNode(41);
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir)
                     .healthPollInterval(NO_POLL).sources(List.of(new PassthroughSource())).scheduler(clock).build()) {
            manager.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            kubelet.await(Harness.WAIT, k -> k.streaming(H200.fullName()));
            PciAddress gpu = PciAddress.parse("0000:41:00.0");

            manager.markGpuUnhealthy(gpu, "XID 79");
            assertThat(manager.inContext(() -> manager.plugin(H200).advertised().isHealthy("0000:41:00.0"))).isFalse();
            kubelet.await(Harness.WAIT, k -> k.resources().get(H200.fullName())
                    .equals(List.of(new DeviceState("0000:41:00.0", "Unhealthy", java.util.OptionalInt.of(0)))));

            manager.markGpuHealthy(gpu);
            assertThat(manager.inContext(() -> manager.plugin(H200).advertised().isHealthy("0000:41:00.0"))).isTrue();
            assertThat(clock.pending()).as("only the poll waits").containsExactly(NO_POLL);
        }
    }

    @Test
    void aGroupNodeNoWatchSeesIsFoundWhenTheClockReachesThePoll() throws Exception {
        FakeScheduler clock = new FakeScheduler();
        Path dir = tmp.resolve("dp");
        Duration poll = Duration.ofSeconds(5);
        // The host root on jimfs is not watched: only the periodic check can see its group nodes change.
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix());
             StandInKubelet kubelet = StandInKubelet.start(dir)) {
            SysfsTree host = SysfsTree.at(fs.getPath("/host"));
            host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create().addGroupNode(41);
            try (PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir)
                    .healthPollInterval(poll).sources(List.of(new PassthroughSource())).scheduler(clock).build()) {
                manager.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
                kubelet.await(Harness.WAIT, k -> k.streaming(H200.fullName()));

                host.removeGroupNode(41);
                clock.forward(poll);
                assertThat(settledHealth(manager)).isFalse();

                host.addGroupNode(41);
                clock.forward(poll);
                assertThat(settledHealth(manager)).isTrue();
                kubelet.await(Harness.WAIT, k -> k.resources().get(H200.fullName()).get(0).healthy());
            }
        }
    }

    @Test
    void theKubeletSocketIsMissedWhenAPollFindsItGoneAndSeenAgainWhenOneFindsItBack() throws Exception {
        FakeScheduler clock = new FakeScheduler();
        Path dir = tmp.resolve("dp");
        Duration poll = Duration.ofSeconds(5);
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create().addGroupNode(41);
        StandInKubelet first = StandInKubelet.start(dir);
        AtomicReference<StandInKubelet> restarted = new AtomicReference<>();
        String log;
        try (PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir)
                .healthPollInterval(poll).sources(List.of(new PassthroughSource())).scheduler(clock).build()) {
            assertThat(manager.kubeletSocketPresent()).as("the first check runs as the manager starts").isTrue();
            manager.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            first.await(Harness.WAIT, k -> k.streaming(H200.fullName()));

            log = CapturedStderr.of(() -> {
                first.close(); // the kubelet is down: its socket is deleted
                for (int i = 0; i < 6; i++) {
                    clock.forward(poll);
                }
                assertThat(settledKubeletSocket(manager)).isFalse();
                assertThat(manager.status()).extracting(ResourceStatus::serving).as("still served").containsExactly(true);

                StandInKubelet second = StandInKubelet.start(dir);
                restarted.set(second);
                clock.forward(poll);
                assertThat(settledKubeletSocket(manager)).isTrue();
                // Registering again may wait for a retry the registrar scheduled while the kubelet was down: the
                // clock is moved by hand until the new kubelet streams (each look moves it by one second).
                await().atMost(Harness.WAIT).pollInSameThread().until(() -> {
                    clock.forward(Duration.ofSeconds(1));
                    return second.streaming(H200.fullName());
                });
            });
        } finally {
            first.close();
            if (restarted.get() != null) {
                restarted.get().close();
            }
        }
        assertThat(log.lines().filter(line -> line.contains(" WARN ") && line.contains("kubelet.sock is gone")))
                .as(log).hasSize(1);
        assertThat(log.lines().filter(line -> line.contains(" INFO ") && line.endsWith("kubelet.sock is back")))
                .as(log).hasSize(1);
    }

    /** Whether the kubelet's socket was seen, once the check rounds started so far have finished (see below). */
    private static boolean settledKubeletSocket(PluginManager manager) {
        for (int i = 0; i < 3; i++) {
            manager.inContext(() -> null);
        }
        return manager.kubeletSocketPresent();
    }

    /** The registration retries waiting on the clock (the poll, most of an hour away, left out). */
    private static List<Duration> retries(FakeScheduler clock) {
        return clock.pending().stream().filter(d -> d.compareTo(NO_POLL.dividedBy(2)) < 0).toList();
    }

    /**
     * The health of the GPU once the check rounds started so far have finished: a round posts what it read back to
     * the context, and a watch event may have folded one more round after it, so a few context tasks in a row let
     * every one of them land first.
     */
    private static boolean settledHealth(PluginManager manager) {
        for (int i = 0; i < 3; i++) {
            manager.inContext(() -> null);
        }
        return manager.inContext(() -> manager.plugin(H200).advertised().isHealthy("0000:41:00.0"));
    }
}
