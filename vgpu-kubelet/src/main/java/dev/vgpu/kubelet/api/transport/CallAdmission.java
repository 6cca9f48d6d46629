package dev.vgpu.kubelet.api.transport;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admits a call to the call threads only while fewer than a bound of calls are pending there (admitted, handler
 * not yet returned); every other call is answered {@code RESOURCE_EXHAUSTED} on the event loop, without queueing.
 *
 * <p>Why not a bounded queue: grpc-java hands a call's work to its executor through a serializing executor that
 * rethrows a {@code RejectedExecutionException} into the transport, which resets the stream with {@code INTERNAL}
 * and logs a WARN per call. Instead the server's own executor is direct (the event loop) and this class decides per
 * call, before any work is queued: as the {@link ServerCallExecutorSupplier} (asked on the event loop once the
 * method is known) it takes a permit and moves the call to the call threads, or marks the call refused and leaves
 * it on the event loop, where the same class as the first {@link ServerInterceptor} closes it. A permit is given
 * back once, when the handler's half-close returns (a unary handler has answered by then; a ListAndWatch handler
 * has wired its stream), or when the call is cancelled or completes before that. Thread-safe.
 */
final class CallAdmission implements ServerCallExecutorSupplier, ServerInterceptor {

    /** Set by {@link #getExecutor} on a refused call's headers; a client's own value is dropped first. */
    private static final Metadata.Key<String> REFUSED =
            Metadata.Key.of("vgpu-refused-by-admission", Metadata.ASCII_STRING_MARSHALLER);

    private final int bound;
    private final Executor callThreads;
    private final AtomicInteger pending = new AtomicInteger();

    CallAdmission(int bound, Executor callThreads) {
        this.bound = bound;
        this.callThreads = callThreads;
    }

    @Override
    public <ReqT, RespT> Executor getExecutor(ServerCall<ReqT, RespT> call, Metadata headers) {
        headers.discardAll(REFUSED);
        if (pending.incrementAndGet() > bound) {
            pending.decrementAndGet();
            headers.put(REFUSED, "1");
            return null; // stays on the server's direct executor: the event loop
        }
        return callThreads;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        if (headers.containsKey(REFUSED)) {
            call.close(Status.RESOURCE_EXHAUSTED.withDescription("more than " + bound
                    + " calls are waiting for this device plugin; try again"), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        AtomicBoolean held = new AtomicBoolean(true);
        Runnable release = () -> {
            if (held.compareAndSet(true, false)) {
                pending.decrementAndGet();
            }
        };
        ServerCall.Listener<ReqT> listener;
        try {
            listener = next.startCall(call, headers);
        } catch (RuntimeException | Error e) {
            release.run();
            throw e;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onHalfClose() {
                try {
                    super.onHalfClose();
                } finally {
                    release.run();
                }
            }

            @Override
            public void onCancel() {
                release.run();
                super.onCancel();
            }

            @Override
            public void onComplete() {
                release.run();
                super.onComplete();
            }
        };
    }

    /** Calls pending on the call threads now (for tests). */
    int pending() {
        return pending.get();
    }
}
