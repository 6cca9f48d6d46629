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
    private final DraObserver heard;

    /** Tells {@code heard} how many claims the checkpoint restored (before any call can run). */
    ClaimCalls(ExecutorService claimsThread, ClaimPreparer preparer, DraObserver heard) {
        this.claimsThread = claimsThread;
        this.preparer = preparer;
        this.heard = heard;
        heard.preparedClaims(preparer.preparedCount());
    }

    /** Prepares on the claims thread and answers {@code observer} with {@code reply} of the outcomes. */
    <R> void prepare(List<ClaimRef> claims, Function<Map<String, ClaimOutcome>, R> reply, StreamObserver<R> observer) {
        run(() -> {
            Map<String, ClaimOutcome> outcomes = preparer.prepare(claims);
            R answer = reply.apply(outcomes);
            outcomes.values().forEach(o -> heard.claimPrepared(o instanceof ClaimOutcome.Prepared));
            return answer;
        }, () -> distinct(claims).forEach(uid -> heard.claimPrepared(false)), observer);
    }

    /** Unprepares on the claims thread and answers {@code observer} with {@code reply} of the errors. */
    <R> void unprepare(List<ClaimRef> claims, Function<Map<String, Optional<String>>, R> reply,
                       StreamObserver<R> observer) {
        run(() -> {
            Map<String, Optional<String>> errors = preparer.unprepare(claims);
            R answer = reply.apply(errors);
            errors.values().forEach(e -> heard.claimUnprepared(e.isEmpty()));
            return answer;
        }, () -> distinct(claims).forEach(uid -> heard.claimUnprepared(false)), observer);
    }

    private static List<String> distinct(List<ClaimRef> claims) {
        return claims.stream().map(ClaimRef::uid).distinct().toList();
    }

    private <R> void run(java.util.function.Supplier<R> call, Runnable failed, StreamObserver<R> observer) {
        try {
            claimsThread.execute(() -> {
                R answer;
                try {
                    answer = call.get();
                } catch (RuntimeException e) {
                    LOG.error("A DRA call failed", e);
                    heard.preparedClaims(preparer.preparedCount()); // before the answer: the caller sees it counted
                    failed.run();
                    observer.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
                    return;
                }
                heard.preparedClaims(preparer.preparedCount());
                observer.onNext(answer);
                observer.onCompleted();
            });
        } catch (RejectedExecutionException e) {
            observer.onError(Status.UNAVAILABLE.withDescription("the DRA plugin is stopping").asRuntimeException());
        }
    }
}
