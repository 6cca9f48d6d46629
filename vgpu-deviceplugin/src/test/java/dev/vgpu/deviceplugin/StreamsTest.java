package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Device;
import dev.vgpu.core.Resource;
import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** ListAndWatch fan-out and the coalescing mailbox, with extra raw clients next to the stand-in kubelet. */
@Tag("reliability")
class StreamsTest {

    @TempDir
    Path tmp;

    @Test
    void everyOpenStreamGetsEveryUpdate() {
        try (Harness h = Harness.start(tmp); UnixDomainTransport client = UnixDomainTransport.create("test", 1, 1)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));
            ManagedChannel channel = client.dial(h.pluginDir.resolve(H200.socketFileName()));
            Reader lingering = new Reader(Integer.MAX_VALUE);
            DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), lingering);
            await().atMost(Harness.WAIT).until(() -> lingering.received.size() == 1);

            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 0)));

            h.await(k -> k.resources().get(H200.fullName()).size() == 2);
            await().atMost(Harness.WAIT).until(() -> lingering.received.size() == 2);
            assertThat(lingering.received.get(1).getDevicesCount()).isEqualTo(2);
            channel.shutdownNow();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aStreamThatDoesNotReadNeverBlocksUpdatesAndEndsWithTheLatestList() throws Exception {
        try (Harness h = Harness.start(tmp); UnixDomainTransport client = UnixDomainTransport.create("test", 1, 1)) {
            List<Device> devices = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                devices.add(passthrough(String.format("0000:%02x:00.0", 0x40 + i), 40 + i, i % 2));
            }
            Snapshot all = snapshot(devices);
            h.apply(all);
            h.await(k -> k.streaming(H200.fullName()));
            ManagedChannel channel = client.dial(h.pluginDir.resolve(H200.socketFileName()));
            Reader slow = new Reader(1);
            DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), slow);
            await().atMost(Harness.WAIT).until(() -> slow.received.size() == 1);

            ResourcePlugin plugin = h.manager.plugin(H200);
            Resource full = all.resource(H200).orElseThrow();
            Resource fewer = Resource.of(devices.subList(0, 31));
            int updates = 20_000;
            // Each update is its own state change in the manager's context, as a rescan's would be.
            for (int i = 0; i < updates; i++) {
                Resource next = i % 2 == 0 ? fewer : full;
                h.manager.inContext(() -> {
                    plugin.update(next);
                    return null;
                });
            }
            h.manager.inContext(() -> {
                plugin.update(fewer);
                return null;
            });
            ListAndWatchResponse latest = plugin.advertised().toResponse();

            slow.call.request(Integer.MAX_VALUE);

            await().atMost(Harness.WAIT).until(() -> slow.last().equals(latest));
            assertThat(slow.received.size()).isLessThan(updates);
            h.await(k -> k.resources().get(H200.fullName()).size() == 31);
            channel.shutdownNow();
        }
    }

    /** A ListAndWatch client that asks for {@code initial} messages and then only what the test requests. */
    private static final class Reader implements ClientResponseObserver<Empty, ListAndWatchResponse> {
        final List<ListAndWatchResponse> received = new CopyOnWriteArrayList<>();
        private final int initial;
        volatile ClientCallStreamObserver<Empty> call;

        Reader(int initial) {
            this.initial = initial;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
            call = requestStream;
            if (initial != Integer.MAX_VALUE) {
                requestStream.disableAutoRequestWithInitial(initial);
            }
        }

        ListAndWatchResponse last() {
            return received.isEmpty() ? null : received.get(received.size() - 1);
        }

        @Override
        public void onNext(ListAndWatchResponse value) {
            received.add(value);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }
    }
}
