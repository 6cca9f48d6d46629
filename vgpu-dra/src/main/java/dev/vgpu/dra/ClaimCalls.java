package dev.vgpu.dra;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one implementation behind both DRA service versions: each call is posted to the claims thread, which owns the
 * {@link ClaimPreparer}, so calls run one at a time in arrival order (as the Go helper serializes them) and gRPC's
 * threads never touch claim state. The adapters only translate messages.
 */
final class ClaimCalls {

    private static final Logger LOG = LoggerFactory.getLogger(ClaimCalls.class);

    private final ExecutorService claimsThread;
    private final ClaimPreparer preparer;

    ClaimCalls(ExecutorService claimsThread, ClaimPreparer preparer) {
        this.claimsThread = claimsThread;
        this.preparer = preparer;
    }

    /** Prepares on the claims thread and answers {@code observer} with {@code reply} of the outcomes. */
    <R> void prepare(List<ClaimRef> claims, Function<Map<String, ClaimOutcome>, R> reply, StreamObserver<R> observer) {
        run(() -> reply.apply(preparer.prepare(claims)), observer);
    }

    /** Unprepares on the claims thread and answers {@code observer} with {@code reply} of the errors. */
    <R> void unprepare(List<ClaimRef> claims, Function<Map<String, Optional<String>>, R> reply,
                       StreamObserver<R> observer) {
        run(() -> reply.apply(preparer.unprepare(claims)), observer);
    }

    private <R> void run(java.util.function.Supplier<R> call, StreamObserver<R> observer) {
        try {
            claimsThread.execute(() -> {
                R answer;
                try {
                    answer = call.get();
                } catch (RuntimeException e) {
                    LOG.error("A DRA call failed", e);
                    observer.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
                    return;
                }
                observer.onNext(answer);
                observer.onCompleted();
            });
        } catch (RejectedExecutionException e) {
            observer.onError(Status.UNAVAILABLE.withDescription("the DRA plugin is stopping").asRuntimeException());
        }
    }
}
