package dev.vgpu.kubelet.api.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import dev.vgpu.kubelet.testsupport.AllocateFlood;
import dev.vgpu.testsupport.RecordingThreads;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bounds of a transport's servers over a real unix socket (docs/RELIABILITY.md, "The gRPC servers"): calls
 * beyond the pending bound are answered {@code RESOURCE_EXHAUSTED} at once instead of queueing, connections without
 * calls are closed, a JVM error on a call thread is recorded as the transport's failure.
 */
@Tag("reliability")
class BoundedServerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    /** Allocate waits for {@code release} while {@code hold} is set, and throws {@code error} when one is given. */
    private static final class HeldAllocate extends DevicePluginGrpc.DevicePluginImplBase {
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger entered = new AtomicInteger();
        volatile Error error;

        @Override
        public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
            if (error != null) {
                throw error;
            }
            entered.incrementAndGet();
            try {
                // Far longer than any wait of the test: only release() lets a held call answer (the test's @Timeout
                // bounds it), so a slow flood cannot see held calls time out and free their places.
                release.await(10, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            response.onNext(AllocateResponse.getDefaultInstance());
            response.onCompleted();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void callsBeyondThePendingBoundAreAnsweredResourceExhaustedAndTheAdmittedOnesStillFinish() throws IOException {
        HeldAllocate service = new HeldAllocate();
        Path socket = tmp.resolve("bounded.sock");
        try (UnixDomainTransport server = UnixDomainTransport.create("bounded", 1, 2,
                ServerLimits.DEFAULT.withPendingCalls(4));
             UnixDomainTransport client = UnixDomainTransport.create("client", 1, 2)) {
            Server served = server.serve(socket, List.of(service));
            ManagedChannel channel = client.dial(socket);
            AllocateFlood admitted = AllocateFlood.ofEmptyRequests();
            admitted.send(List.of(channel), 4);
            // Both call threads are held, two admitted calls wait in the queue.
            await().atMost(WAIT).until(() -> service.entered.get() == 2 && server.pendingCalls() == 4);

            AllocateFlood flood = AllocateFlood.ofEmptyRequests();
            int excess = 400;
            flood.send(List.of(channel), excess);
            await().atMost(WAIT).until(() -> flood.answered() == excess);
            assertThat(flood.of(Status.Code.RESOURCE_EXHAUSTED)).isEqualTo(excess);
            assertThat(server.pendingCalls()).isEqualTo(4);

            service.release.countDown();
            await().atMost(WAIT).until(() -> admitted.answered() == 4);
            assertThat(admitted.of(Status.Code.OK)).isEqualTo(4);
            await().atMost(WAIT).until(() -> server.pendingCalls() == 0);
            AllocateFlood after = AllocateFlood.ofEmptyRequests();
            after.send(channel);
            await().atMost(WAIT).until(() -> after.answered() == 1);
            assertThat(after.of(Status.Code.OK)).isEqualTo(1);
            assertThat(server.failure()).isEmpty();
            channel.shutdownNow();
            served.shutdownNow();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void connectionsWithoutCallsAreClosedAndOneWithACallIsKept() throws Exception {
        HeldAllocate service = new HeldAllocate();
        Path socket = tmp.resolve("idle.sock");
        try (UnixDomainTransport server = UnixDomainTransport.create("idle", 1, 2,
                ServerLimits.DEFAULT.withConnectionIdle(Duration.ofMillis(200)));
             UnixDomainTransport client = UnixDomainTransport.create("client", 1, 2)) {
            Server served = server.serve(socket, List.of(service));
            ManagedChannel channel = client.dial(socket);
            AllocateFlood held = AllocateFlood.ofEmptyRequests();
            held.send(channel);
            await().atMost(WAIT).until(() -> service.entered.get() == 1);

            List<CompletableFuture<Integer>> idle = new ArrayList<>();
            java.util.concurrent.ExecutorService readers = java.util.concurrent.Executors.newCachedThreadPool();
            List<SocketChannel> sockets = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                SocketChannel idler = SocketChannel.open(UnixDomainSocketAddress.of(socket));
                sockets.add(idler);
                // Reads (and drops) whatever the server sends until it closes the connection.
                idle.add(CompletableFuture.supplyAsync(() -> {
                    ByteBuffer buffer = ByteBuffer.allocate(4096);
                    try {
                        int n;
                        do {
                            n = idler.read(buffer.clear());
                        } while (n >= 0);
                        return n;
                    } catch (IOException e) {
                        return -2;
                    }
                }, readers));
            }
            await().atMost(WAIT).until(() -> idle.stream().allMatch(CompletableFuture::isDone));
            assertThat(idle).allSatisfy(f -> assertThat(f.join()).as("end of stream").isEqualTo(-1));

            assertThat(held.answered()).as("the connection with a call is not closed").isZero();
            service.release.countDown();
            await().atMost(WAIT).until(() -> held.answered() == 1);
            assertThat(held.of(Status.Code.OK)).isEqualTo(1);
            for (SocketChannel s : sockets) {
                s.close();
            }
            readers.shutdownNow();
            channel.shutdownNow();
            served.shutdownNow();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aJvmErrorOnACallThreadIsTheTransportsFailureAndTheThreadCountStays() throws IOException {
        HeldAllocate service = new HeldAllocate();
        service.error = new OutOfMemoryError("Cannot reserve 8192 bytes of direct buffer memory");
        service.release.countDown();
        Path socket = tmp.resolve("fatal.sock");
        RecordingThreads threads = new RecordingThreads("fatal");
        try (UnixDomainTransport server = UnixDomainTransport.create("fatal", 1, 2, ServerLimits.DEFAULT, threads);
             UnixDomainTransport client = UnixDomainTransport.create("client", 1, 2)) {
            Server served = server.serve(socket, List.of(service));
            ManagedChannel channel = client.dial(socket);
            assertThat(server.failure()).isEmpty();
            AllocateFlood first = AllocateFlood.ofEmptyRequests();
            first.send(channel);
            await().atMost(WAIT).until(() -> first.answered() == 1);

            assertThat(first.of(Status.Code.OK)).isZero();
            await().atMost(WAIT).until(() -> server.failure().isPresent());
            assertThat(server.failure().orElseThrow()).contains("OutOfMemoryError", "direct buffer memory");

            service.error = null;
            AllocateFlood after = AllocateFlood.ofEmptyRequests();
            after.send(channel);
            await().atMost(WAIT).until(() -> after.answered() == 1);
            assertThat(after.of(Status.Code.OK)).as("the pool replaced the thread").isEqualTo(1);
            assertThat(server.failure()).as("a failure stays").isPresent();
            // The thread the error ended is on its way out once the next call was answered on its replacement.
            await().atMost(WAIT).untilAsserted(() -> assertThat(threads.alive())
                    .as("the event loop and at most two call threads: %s", threads.aliveNames()).isLessThanOrEqualTo(3));
            assertThat(threads.made()).as("one event loop, two call threads and one replacement").isEqualTo(4);
            channel.shutdownNow();
            served.shutdownNow();
        }
        // Close has waited for both pools; a thread may still be on its last instructions.
        await().atMost(WAIT).untilAsserted(() -> assertThat(threads.aliveNames())
                .as("every thread the transport was given ended at close").isEmpty());
    }
}
