package dev.vgpu.deviceplugin;

import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One open ListAndWatch stream with a coalescing mailbox of size one.
 *
 * <p>{@link #offer} never blocks: it replaces the pending list and sends it when gRPC flow control says the
 * stream is ready; a stream that is not ready keeps only the latest list and sends it from its on-ready callback.
 * Every interaction with the observer happens inside {@link #drain()}, which the {@code wip} counter serializes
 * across threads (the publisher in the manager's context, gRPC's on-ready and cancel callbacks), so the observer
 * sees one thread at a time. This mailbox is the one place where the context and gRPC threads meet on mutable
 * state, so updates never wait for a stream.
 */
final class DeviceListStream {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceListStream.class);

    private final String resource;
    private final ServerCallStreamObserver<ListAndWatchResponse> observer;
    private final AtomicReference<ListAndWatchResponse> pending = new AtomicReference<>();
    private final AtomicInteger wip = new AtomicInteger();
    private volatile boolean completeRequested;
    private volatile boolean cancelled;
    /** Set once when the stream is refused (the server is restarting or stopped); sent by drain(). */
    private volatile StatusRuntimeException refusal;
    // Written only inside drain() (serialized by wip).
    private boolean done;

    DeviceListStream(String resource, ServerCallStreamObserver<ListAndWatchResponse> observer) {
        this.resource = resource;
        this.observer = observer;
    }

    /** Makes {@code list} the next message; an older pending list is dropped. Never blocks. */
    void offer(ListAndWatchResponse list) {
        pending.set(list);
        drain();
    }

    /** Ends the stream normally once the pending list (if any) is sent. */
    void complete() {
        completeRequested = true;
        drain();
    }

    /** Called when the peer cancelled: nothing more is sent. */
    void cancelled() {
        cancelled = true;
        drain();
    }

    /** Ends the stream with {@code why} instead of any list. */
    void refuse(StatusRuntimeException why) {
        refusal = why;
        drain();
    }

    /** True once the stream is finished (completed or cancelled). */
    boolean isDone() {
        return cancelled || refusal != null || completeRequested && pending.get() == null;
    }

    /** Sends what may be sent now; any thread. */
    void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            if (!done) {
                try {
                    sendReady();
                } catch (RuntimeException e) {
                    // The call was cancelled or closed under us; the peer is gone.
                    LOG.debug("ListAndWatch stream of {} closed while sending: {}", resource, e.toString());
                    done = true;
                    pending.set(null);
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void sendReady() {
        if (cancelled || observer.isCancelled()) {
            done = true;
            pending.set(null);
            return;
        }
        if (refusal != null) {
            done = true;
            pending.set(null);
            observer.onError(refusal);
            return;
        }
        while (observer.isReady()) {
            ListAndWatchResponse next = pending.getAndSet(null);
            if (next == null) {
                break;
            }
            observer.onNext(next);
        }
        if (completeRequested && pending.get() == null) {
            done = true;
            observer.onCompleted();
        }
    }
}
