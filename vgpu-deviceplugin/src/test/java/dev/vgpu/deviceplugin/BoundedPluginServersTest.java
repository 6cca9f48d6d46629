package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.identified;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.kubelet.testsupport.AllocateFlood;
import dev.vgpu.testsupport.RecordingThreads;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile clients of a plugin's server over its real socket (docs/RELIABILITY.md, "The gRPC servers"):
 * never-reading ListAndWatch streams, an Allocate flood, HTTP/2 rapid reset, a JVM error in a call. Counts are
 * bounded; the assertions are outcomes: the kubelet's stream lives, the plugin answers a normal Allocate afterwards.
 */
@Tag("reliability")
class BoundedPluginServersTest {

    private static final String GPU0 = "0000:41:00.0";

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void neverReadingStreamsBeyondTheBoundEndTheOldestAndTheKubeletsStreamIsKept() {
        try (Harness h = started(); UnixDomainTransport client = UnixDomainTransport.create("hostile", 1, 1)) {
            int before = h.kubelet.listUpdates(H200.fullName());
            List<ManagedChannel> channels = new ArrayList<>();
            List<Stream> hostile = new ArrayList<>();
            // 20 connections with 10 streams each: below the per-connection bound, far above the per-plugin one.
            for (int c = 0; c < 20; c++) {
                ManagedChannel channel = client.dial(h.pluginDir.resolve(H200.socketFileName()));
                channels.add(channel);
                for (int i = 0; i < 10; i++) {
                    Stream stream = new Stream(0);
                    DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), stream);
                    hostile.add(stream);
                }
            }
            ResourcePlugin plugin = h.manager.plugin(H200);
            // Every hostile stream was opened (and the excess ended) once the last one's is among the open ones.
            await().atMost(Harness.WAIT).until(() -> h.manager.inContext(plugin::openStreams)
                    == DeviceListStreams.MAX_STREAMS);

            h.host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(1).create();
            h.apply(snapshot(identified(passthrough(GPU0, 41, 0), "pci:10de:2335"),
                    identified(passthrough("0000:42:00.0", 42, 1), "pci:10de:2335")));

            h.await(k -> k.resources().get(H200.fullName()).size() == 2);
            assertThat(h.kubelet.streaming(H200.fullName())).as("the kubelet's stream was never ended").isTrue();
            assertThat(h.kubelet.listUpdates(H200.fullName())).isGreaterThan(before);
            assertThat(h.manager.inContext(plugin::openStreams)).isEqualTo(DeviceListStreams.MAX_STREAMS);
            assertThat(h.kubelet.allocate(H200.fullName(), List.of(GPU0)).getContainerResponsesCount()).isEqualTo(1);
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void anAllocateFloodIsAnsweredOkOrResourceExhaustedAndANormalAllocateStillWorks() {
        try (Harness h = started(); UnixDomainTransport client = UnixDomainTransport.create("flood", 1, 2)) {
            AllocateFlood flood = AllocateFlood.forDevices(GPU0);
            List<ManagedChannel> channels = new ArrayList<>();
            int connections = 16;
            int perConnection = 250;
            for (int c = 0; c < connections; c++) {
                channels.add(client.dial(h.pluginDir.resolve(H200.socketFileName())));
            }
            flood.send(channels, connections * perConnection);
            await().atMost(Harness.WAIT.multipliedBy(4)).until(() -> flood.answered() == connections * perConnection);

            assertThat(flood.codes()).as("every call answered OK or RESOURCE_EXHAUSTED: %s", flood)
                    .isSubsetOf(Status.Code.OK, Status.Code.RESOURCE_EXHAUSTED);
            // 16 connections with 16 calls each on the wire at once, four times the bound, against two call threads.
            assertThat(flood.of(Status.Code.RESOURCE_EXHAUSTED)).as("refused beyond the bound: %s", flood)
                    .isPositive();
            System.out.println("Allocate flood outcomes: " + flood);
            assertThat(h.kubelet.allocate(H200.fullName(), List.of(GPU0)).getContainerResponsesCount()).isEqualTo(1);
            assertThat(h.kubelet.streaming(H200.fullName())).isTrue();
            assertThat(h.manager.transportFailure()).isEmpty();
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aConnectionThatResetsStreamsRapidlyIsClosedAndTheKubeletsStreamIsKept() throws Exception {
        try (Harness h = started(); UnixDomainTransport client = UnixDomainTransport.create("reset", 1, 1)) {
            ManagedChannel channel = client.dial(h.pluginDir.resolve(H200.socketFileName()));
            Stream watcher = new Stream(Integer.MAX_VALUE);
            DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), watcher);
            await().atMost(Harness.WAIT).until(() -> watcher.received.get() == 1);

            // Each stream is open on the server (its first list came) before the client resets it.
            int resets = 0;
            while (watcher.ended.get() == null && resets < 1_000) {
                Stream reset = new Stream(Integer.MAX_VALUE);
                DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), reset);
                assertThat(reset.heard.await(Harness.WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                reset.call.get().cancel("reset", null);
                resets++;
            }
            await().atMost(Harness.WAIT).until(() -> watcher.ended.get() != null);

            // The server sent GOAWAY (ENHANCE_YOUR_CALM), which grpc-java's client reports as RESOURCE_EXHAUSTED, and
            // closed the connection. A client still writing its next reset when the socket closes may see the broken
            // pipe before it reads the GOAWAY, and reports UNAVAILABLE: the server closed it either way.
            Status ended = watcher.ended.get();
            assertThat(ended.getCode()).as("the connection was closed: %s", ended)
                    .isIn(Status.Code.RESOURCE_EXHAUSTED, Status.Code.UNAVAILABLE);
            if (ended.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                assertThat(ended.getDescription()).contains("too_many_rststreams");
            } else {
                assertThat(String.valueOf(ended.getCause())).as("closed by the server: %s", ended)
                        .containsAnyOf("Broken pipe", "Connection reset");
            }
            assertThat(resets).isLessThan(1_000);
            assertThat(h.kubelet.streaming(H200.fullName())).isTrue();
            assertThat(h.kubelet.allocate(H200.fullName(), List.of(GPU0)).getContainerResponsesCount()).isEqualTo(1);
            channel.shutdownNow();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aDirectMemoryErrorInAnAllocateIsTheManagersTransportFailure() throws Exception {
        Path host = tmp.resolve("host");
        dev.vgpu.testing.SysfsTree tree = dev.vgpu.testing.SysfsTree.at(host);
        tree.mkdirs("dev/vfio");
        tree.passthroughGpu(GPU0, 0x2335).iommuGroup(41).numa(0).create();
        Path pluginDir = tmp.resolve("dp");
        // The checks run on the test's scheduler, so the only threads of the manager's factory that re-check a
        // device are the transport's call threads.
        RecordingThreads threads = new RecordingThreads("manager");
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2);
        try (StandInKubelet kubelet = StandInKubelet.start(pluginDir);
             PluginManager manager = PluginManager.builder().hostRoot(host).devicePluginDir(pluginDir)
                     .sources(List.of(new OutOfDirectMemoryInAllocate(threads))).threads(threads)
                     .scheduler(scheduler).build()) {
            dev.vgpu.core.Snapshot first = snapshot(identified(passthrough(GPU0, 41, 0), "pci:10de:2335"));
            manager.apply(first, dev.vgpu.core.Reconciler.plan(dev.vgpu.core.Snapshot.empty(), first));
            kubelet.await(Harness.WAIT, k -> k.streaming(H200.fullName()));
            assertThat(manager.transportFailure()).isEmpty();

            AtomicReference<Status> answer = new AtomicReference<>();
            try {
                kubelet.allocate(H200.fullName(), List.of(GPU0));
            } catch (io.grpc.StatusRuntimeException e) {
                answer.set(e.getStatus());
            }

            assertThat(answer.get()).as("the Allocate failed").isNotNull();
            await().atMost(Harness.WAIT).until(() -> manager.transportFailure().isPresent());
            assertThat(manager.transportFailure().orElseThrow()).contains("direct buffer memory");
        } finally {
            scheduler.shutdownNow();
        }
    }

    private Harness started() {
        Harness h = Harness.start(tmp);
        h.host.passthroughGpu(GPU0, 0x2335).iommuGroup(41).numa(0).create();
        h.apply(snapshot(identified(passthrough(GPU0, 41, 0), "pci:10de:2335")));
        h.await(k -> k.streaming(H200.fullName()));
        return h;
    }

    /** The passthrough source, whose re-check on a thread of {@code callThreads} runs out of direct memory. */
    private static final class OutOfDirectMemoryInAllocate implements DeviceSource {
        private final PassthroughSource real = new PassthroughSource();
        private final RecordingThreads callThreads;

        OutOfDirectMemoryInAllocate(RecordingThreads callThreads) {
            this.callThreads = callThreads;
        }

        @Override
        public String name() {
            return real.name();
        }

        @Override
        public Discovery discover(Host host) throws IOException {
            return real.discover(host);
        }

        @Override
        public DeviceCheck recheck(Host host, Device device) {
            if (callThreads.made(Thread.currentThread())) {
                throw new OutOfMemoryError("Cannot reserve 8192 bytes of direct buffer memory");
            }
            return real.recheck(host, device);
        }
    }

    /** A ListAndWatch client that asks for {@code initial} lists, counts them and keeps how the stream ended. */
    private static final class Stream implements ClientResponseObserver<Empty, ListAndWatchResponse> {
        final AtomicInteger received = new AtomicInteger();
        final AtomicReference<Status> ended = new AtomicReference<>();
        final AtomicReference<ClientCallStreamObserver<Empty>> call = new AtomicReference<>();
        /** Open once the first list or the end came. */
        final CountDownLatch heard = new CountDownLatch(1);
        private final int initial;

        Stream(int initial) {
            this.initial = initial;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
            call.set(requestStream);
            if (initial != Integer.MAX_VALUE) {
                requestStream.disableAutoRequestWithInitial(initial);
            }
        }

        @Override
        public void onNext(ListAndWatchResponse value) {
            received.incrementAndGet();
            heard.countDown();
        }

        @Override
        public void onError(Throwable t) {
            ended.set(Status.fromThrowable(t));
            heard.countDown();
        }

        @Override
        public void onCompleted() {
            ended.set(Status.OK);
            heard.countDown();
        }
    }
}
