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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
                release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            response.onNext(AllocateResponse.getDefaultInstance());
            response.onCompleted();
        }
    }

    /** Outcomes by status code of asynchronous Allocate calls. */
    private static final class Outcomes {
        final Map<Status.Code, AtomicInteger> byCode = new ConcurrentHashMap<>();
        final AtomicInteger done = new AtomicInteger();

        void send(DevicePluginGrpc.DevicePluginStub stub) {
            stub.allocate(AllocateRequest.getDefaultInstance(), new StreamObserver<>() {
                @Override
                public void onNext(AllocateResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                    count(Status.fromThrowable(t).getCode());
                }

                @Override
                public void onCompleted() {
                    count(Status.Code.OK);
                }
            });
        }

        private void count(Status.Code code) {
            byCode.computeIfAbsent(code, c -> new AtomicInteger()).incrementAndGet();
            done.incrementAndGet();
        }

        int of(Status.Code code) {
            AtomicInteger n = byCode.get(code);
            return n == null ? 0 : n.get();
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
            DevicePluginGrpc.DevicePluginStub stub = DevicePluginGrpc.newStub(channel);
            Outcomes admitted = new Outcomes();
            for (int i = 0; i < 4; i++) {
                admitted.send(stub);
            }
            // Both call threads are held, two admitted calls wait in the queue.
            await().atMost(WAIT).until(() -> service.entered.get() == 2 && server.pendingCalls() == 4);

            Outcomes flood = new Outcomes();
            int excess = 400;
            for (int i = 0; i < excess; i++) {
                flood.send(stub);
            }
            await().atMost(WAIT).until(() -> flood.done.get() == excess);
            assertThat(flood.of(Status.Code.RESOURCE_EXHAUSTED)).isEqualTo(excess);
            assertThat(server.pendingCalls()).isEqualTo(4);

            service.release.countDown();
            await().atMost(WAIT).until(() -> admitted.done.get() == 4);
            assertThat(admitted.of(Status.Code.OK)).isEqualTo(4);
            await().atMost(WAIT).until(() -> server.pendingCalls() == 0);
            Outcomes after = new Outcomes();
            after.send(stub);
            await().atMost(WAIT).until(() -> after.done.get() == 1);
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
            Outcomes held = new Outcomes();
            held.send(DevicePluginGrpc.newStub(channel));
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

            assertThat(held.done.get()).as("the connection with a call is not closed").isZero();
            service.release.countDown();
            await().atMost(WAIT).until(() -> held.done.get() == 1);
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
        try (UnixDomainTransport server = UnixDomainTransport.create("fatal", 1, 2);
             UnixDomainTransport client = UnixDomainTransport.create("client", 1, 2)) {
            Server served = server.serve(socket, List.of(service));
            ManagedChannel channel = client.dial(socket);
            assertThat(server.failure()).isEmpty();
            Outcomes first = new Outcomes();
            first.send(DevicePluginGrpc.newStub(channel));
            await().atMost(WAIT).until(() -> first.done.get() == 1);

            assertThat(first.of(Status.Code.OK)).isZero();
            await().atMost(WAIT).until(() -> server.failure().isPresent());
            assertThat(server.failure().orElseThrow()).contains("OutOfMemoryError", "direct buffer memory");

            service.error = null;
            Outcomes after = new Outcomes();
            after.send(DevicePluginGrpc.newStub(channel));
            await().atMost(WAIT).until(() -> after.done.get() == 1);
            assertThat(after.of(Status.Code.OK)).as("the pool replaced the thread").isEqualTo(1);
            assertThat(server.failure()).as("a failure stays").isPresent();
            assertThat(Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("fatal-rpc-"))
                    .filter(Thread::isAlive).count()).isLessThanOrEqualTo(2);
            channel.shutdownNow();
            served.shutdownNow();
        }
    }
}
