package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.L40S_2Q;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.RegisterRequest;
import dev.vgpu.kubelet.api.v1beta1.RegistrationGrpc;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing the kubelet or NVML does can take the threads that health and kubelet-watch checks need: a kubelet
 * that accepts Register calls and never answers holds no scheduler thread, and GPU-fault marks are queued and
 * applied in the order they were made.
 */
@Tag("reliability")
class NoStarvationTest {

    @TempDir
    Path tmp;

    /** A kubelet that takes every Register call and never answers it. */
    static final class SilentKubelet implements AutoCloseable {
        final Set<String> asked = ConcurrentHashMap.newKeySet();
        private final UnixDomainTransport transport = UnixDomainTransport.create("silent-kubelet", 1, 2);
        private final Server server;

        SilentKubelet(Path dir) throws Exception {
            server = transport.serve(dir.resolve("kubelet.sock"), List.of(new RegistrationGrpc.RegistrationImplBase() {
                @Override
                public void register(RegisterRequest request, StreamObserver<Empty> response) {
                    asked.add(request.getResourceName());
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
    void aKubeletThatNeverAnswersHoldsNoSchedulerThreadAndHealthStillFlips() throws Exception {
        // The manager's context runs on these two threads, as on the default scheduler; the test sees only them.
        List<Thread> schedulerThreads = new CopyOnWriteArrayList<>();
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "test-scheduler");
            t.setDaemon(true);
            schedulerThreads.add(t);
            return t;
        });
        try (Harness h = Harness.withoutKubelet(tmp, scheduler)) {
            java.nio.file.Files.createDirectories(h.pluginDir);
            try (SilentKubelet kubelet = new SilentKubelet(h.pluginDir)) {
                h.host.addGroupNode(41).addGroupNode(100).addGroupNode(101);
                // Three resources: more Register calls in flight than the manager has scheduler threads.
                h.apply(snapshot(passthrough("0000:41:00.0", 41, 0),
                        vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0),
                        vf(L40S_2Q, "0000:1b:00.5", "0000:1b:00.0", 101, 0)));
                await().atMost(Harness.WAIT).until(() -> kubelet.asked.containsAll(
                        List.of(H200.fullName(), L40S_1Q.fullName(), L40S_2Q.fullName())));

                h.host.removeGroupNode(41);
                await().atMost(Harness.WAIT).until(() -> !h.manager.plugin(H200).advertised().isHealthy("0000:41:00.0"));

                assertThat(stacks(schedulerThreads)).as("no scheduler thread waits in a Register call")
                        .noneMatch(frame -> frame.contains("blockingUnaryCall") || frame.contains("RegistrationGrpc"));
                assertThat(h.manager.status()).noneMatch(ResourceStatus::registered);
            }
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void gpuFaultMarksAreAppliedInTheOrderTheyWereMade() {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));
            PciAddress gpu = PciAddress.parse("0000:41:00.0");
            for (int round = 0; round < 200; round++) {
                h.manager.markGpuUnhealthy(gpu, "XID 79");
                h.manager.markGpuHealthy(gpu);
            }
            h.manager.markGpuUnhealthy(gpu, "XID 48");
            await().atMost(Harness.WAIT).until(() -> !h.manager.plugin(H200).advertised().isHealthy("0000:41:00.0"));
            h.manager.markGpuHealthy(gpu);
            await().atMost(Harness.WAIT).until(() -> h.manager.plugin(H200).advertised().isHealthy("0000:41:00.0"));
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void gpuFaultMarksFromSeveralThreadsRacingRescansEndAsEachGpusLastMarkSaid() throws Exception {
        try (Harness h = Harness.start(tmp)) {
            List<Device> gpus = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                h.host.addGroupNode(41 + i);
                gpus.add(passthrough(String.format("0000:%02x:00.0", 0x41 + i), 41 + i, 0));
            }
            Snapshot all = snapshot(gpus);
            Snapshot three = snapshot(gpus.subList(0, 3));
            h.apply(all);
            h.await(k -> k.streaming(H200.fullName()));
            ExecutorService markers = Executors.newFixedThreadPool(4);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    PciAddress gpu = gpus.get(i).pciAddress().orElseThrow();
                    boolean endsFaulty = i % 2 == 0;
                    done.add(markers.submit(() -> {
                        go.await();
                        for (int round = 0; round < 500; round++) {
                            h.manager.markGpuUnhealthy(gpu, "XID 79");
                            h.manager.markGpuHealthy(gpu);
                        }
                        if (endsFaulty) {
                            h.manager.markGpuUnhealthy(gpu, "XID 48");
                        }
                        return null;
                    }));
                }
                go.countDown();
                // The rescan thread's part: the fourth GPU leaves and comes back while the marks fly.
                for (int round = 0; round < 200; round++) {
                    h.apply(round % 2 == 0 ? three : all);
                }
                h.apply(all);
                for (Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                markers.shutdownNow();
            }
            Map<String, Boolean> expected = Map.of("0000:41:00.0", false, "0000:42:00.0", true,
                    "0000:43:00.0", false, "0000:44:00.0", true);
            await().atMost(Harness.WAIT).until(() -> h.manager.inContext(() -> gpus.stream().collect(
                    Collectors.toMap(Device::id, d -> h.manager.plugin(H200).advertised().isHealthy(d.id()))))
                    .equals(expected));
            h.await(k -> k.resources().get(H200.fullName()).stream()
                    .collect(Collectors.toMap(DeviceState::id, DeviceState::healthy)).equals(expected));
        }
    }

    private static List<String> stacks(List<Thread> threads) {
        return threads.stream().flatMap(t -> Arrays.stream(t.getStackTrace()).map(StackTraceElement::toString))
                .toList();
    }
}
