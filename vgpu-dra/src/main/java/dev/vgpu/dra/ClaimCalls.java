package dev.vgpu.dra;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.internal.SerialContext;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The front of both DRA service versions (the adapters only translate messages): bounds each call, reads the claims a
 * Prepare needs, and hands the call to the owner ({@link PreparedClaims}), as the Go helper's {@code kubeletplugin}
 * hands its driver claims already read.
 *
 * <ul>
 *   <li>A call naming more than {@link DraLimits#claimsPerCall} claims is {@code INVALID_ARGUMENT} naming the bound,
 *       before any work; beyond {@link DraLimits#pendingCalls} calls not answered yet, {@code RESOURCE_EXHAUSTED}.</li>
 *   <li>Reads run on the one read thread, one claim at a time, each within what is left of the call's deadline (45 s,
 *       the kubelet's, when it sent none) less {@link #ANSWER_MARGIN}; once the client has gone the rest of its claims
 *       are not read. A claim prepared already is never read again, and a call whose claims all are (the kubelet
 *       repeating Prepare after a restart), like every Unprepare, goes straight to the owner: neither waits behind a
 *       read.</li>
 *   <li>One log line per call, not per claim: what was done, and what failed and why, escaped and cut.</li>
 * </ul>
 *
 * <p>Threads: {@link #prepare} and {@link #unprepare} run on a gRPC call thread and return at once; reads run on the
 * read thread; answers are sent from the owner context.
 */
final class ClaimCalls {

    /** The kubelet's own deadline for a DRA call, assumed when a call carries none. */
    static final Duration KUBELET_DEADLINE = Duration.ofSeconds(45);
    /**
     * How long before a call's deadline its reads stop, so that the answer, with an error for each claim not read,
     * reaches the kubelet before it gives up: its event then says why.
     */
    static final Duration ANSWER_MARGIN = Duration.ofSeconds(2);
    /** Claims named in one log line; the rest are counted. */
    private static final int CLAIMS_PER_LINE = 8;

    private static final Logger LOG = LoggerFactory.getLogger(ClaimCalls.class);

    private final DraLimits limits;
    private final ClaimReader reader;
    private final Executor reads;
    private final SerialContext owner;
    private final PreparedClaims claims;
    private final DraObserver heard;
    private final AtomicInteger pending = new AtomicInteger();

    ClaimCalls(DraLimits limits, ClaimReader reader, Executor reads, SerialContext owner, PreparedClaims claims,
               DraObserver heard) {
        this.limits = limits;
        this.reader = reader;
        this.reads = reads;
        this.owner = owner;
        this.claims = claims;
        this.heard = heard;
    }

    /** Prepares the claims and answers {@code observer} with {@code reply} of the result. On a call thread. */
    <R> void prepare(List<ClaimRef> refs, Function<ClaimPreparer.Result, R> reply, StreamObserver<R> observer) {
        Answer<R> answer = admit("NodePrepareResources", refs, reply, observer);
        if (answer == null) {
            return;
        }
        List<ClaimRef> call = distinct(refs);
        Set<String> held = claims.held();
        List<ClaimRef> unread = call.stream().filter(r -> !held.contains(r.uid())).toList();
        if (unread.isEmpty()) {
            toOwner(new PreparedClaims.Call(true, call, Map.of(), answer.client, answer::send, false));
            return;
        }
        try {
            reads.execute(() -> toOwner(new PreparedClaims.Call(true, call, read(unread, answer.client),
                    answer.client, answer::send, false)));
        } catch (RejectedExecutionException e) {
            answer.fail(Status.UNAVAILABLE.withDescription("the DRA plugin is stopping"));
        }
    }

    /**
     * A Prepare whose claims {@code unread} were prepared when it came (so not read) and are not now: reads them on the
     * read thread and queues the call again, once. In the owner context.
     */
    void reread(PreparedClaims.Call call, List<ClaimRef> unread) {
        try {
            reads.execute(() -> {
                Map<String, ClaimReader.Answer> all = new LinkedHashMap<>(call.reads());
                all.putAll(read(unread, call.client()));
                toOwner(new PreparedClaims.Call(true, call.claims(), all, call.client(), call.answer(), true));
            });
        } catch (RejectedExecutionException e) {
            call.answer().accept(Optional.empty());
        }
    }

    /** Unprepares the claims and answers {@code observer} with {@code reply} of the result. On a call thread. */
    <R> void unprepare(List<ClaimRef> refs, Function<ClaimPreparer.Result, R> reply, StreamObserver<R> observer) {
        Answer<R> answer = admit("NodeUnprepareResources", refs, reply, observer);
        if (answer != null) {
            toOwner(new PreparedClaims.Call(false, distinct(refs), Map.of(), answer.client, answer::send, false));
        }
    }

    private void toOwner(PreparedClaims.Call call) {
        owner.execute(() -> claims.submit(call));
    }

    /** Every claim of {@code refs} read, in order, until the client goes or its deadline passes. On the read thread. */
    private Map<String, ClaimReader.Answer> read(List<ClaimRef> refs, Context client) {
        Map<String, ClaimReader.Answer> out = new LinkedHashMap<>();
        for (ClaimRef ref : refs) {
            Duration left = timeLeft(client);
            if (client.isCancelled() || left.toMillis() < 1) {
                break; // the kubelet gave up: it retries the whole call
            }
            ClaimReader.Answer answer;
            try {
                answer = reader.read(ref, left);
            } catch (RuntimeException e) {
                answer = new ClaimReader.Unavailable("cannot read claim " + ref + ": " + Printable.of(e.toString(),
                        200));
            }
            out.put(ref.uid(), answer == null ? new ClaimReader.Unavailable("cannot read claim " + ref
                    + ": the reader answered nothing") : answer);
        }
        return out;
    }

    private static Duration timeLeft(Context client) {
        Deadline deadline = client.getDeadline();
        Duration left = deadline == null ? KUBELET_DEADLINE
                : Duration.ofNanos(deadline.timeRemaining(TimeUnit.NANOSECONDS));
        return left.minus(ANSWER_MARGIN);
    }

    /** The call's answer if it may go on; null when it was refused (answered already). */
    private <R> Answer<R> admit(String method, List<ClaimRef> refs, Function<ClaimPreparer.Result, R> reply,
                                StreamObserver<R> observer) {
        if (refs.size() > limits.claimsPerCall()) {
            String text = method + " with " + refs.size() + " claims: at most " + limits.claimsPerCall()
                    + " claims a call (the kubelet sends one pod's)";
            LOG.warn("Refused {}", text);
            observer.onError(Status.INVALID_ARGUMENT.withDescription(text).asRuntimeException());
            return null;
        }
        if (pending.incrementAndGet() > limits.pendingCalls()) {
            pending.decrementAndGet();
            observer.onError(Status.RESOURCE_EXHAUSTED.withDescription("more than " + limits.pendingCalls()
                    + " DRA calls are waiting for this plugin; try again").asRuntimeException());
            return null;
        }
        return new Answer<>(method.equals("NodePrepareResources"), distinct(refs), Context.current(), reply,
                observer);
    }

    private static List<ClaimRef> distinct(List<ClaimRef> refs) {
        Map<String, ClaimRef> byUid = new LinkedHashMap<>();
        refs.forEach(r -> byUid.putIfAbsent(r.uid(), r));
        return List.copyOf(byUid.values());
    }

    /** One admitted call's answer: sent once, its pending slot given back once. */
    private final class Answer<R> {
        private final boolean prepare;
        private final Map<String, ClaimRef> refs = new LinkedHashMap<>();
        private final Context client;
        private final Function<ClaimPreparer.Result, R> reply;
        private final StreamObserver<R> observer;
        private final AtomicBoolean done = new AtomicBoolean();

        Answer(boolean prepare, List<ClaimRef> call, Context client, Function<ClaimPreparer.Result, R> reply,
               StreamObserver<R> observer) {
            this.prepare = prepare;
            call.forEach(r -> refs.put(r.uid(), r));
            this.client = client;
            this.reply = reply;
            this.observer = observer;
        }

        /** In the owner context: the result, or empty when the call was skipped or its work failed. */
        void send(Optional<ClaimPreparer.Result> result) {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            pending.decrementAndGet();
            if (result.isEmpty()) {
                if (client.isCancelled()) {
                    LOG.debug("A DRA call was skipped: its client had gone");
                    return;
                }
                observer.onError(Status.INTERNAL.withDescription("the DRA plugin could not finish the call; its log"
                        + " says why").asRuntimeException());
                return;
            }
            ClaimPreparer.Result r = result.get();
            heard.preparedClaims(r.claims().size());
            r.outcomes().values().forEach(o -> {
                if (prepare) {
                    heard.claimPrepared(o.isEmpty());
                } else {
                    heard.claimUnprepared(o.isEmpty());
                }
            });
            log(r);
            try {
                observer.onNext(reply.apply(r));
                observer.onCompleted();
            } catch (RuntimeException e) {
                LOG.debug("Answering a DRA call whose client has gone: {}", e.toString());
            }
        }

        void fail(Status status) {
            if (done.compareAndSet(false, true)) {
                pending.decrementAndGet();
                observer.onError(status.asRuntimeException());
            }
        }

        /** One INFO line for what was done, one WARN line for what failed. */
        private void log(ClaimPreparer.Result r) {
            List<String> ok = new ArrayList<>();
            List<String> failed = new ArrayList<>();
            r.outcomes().forEach((uid, error) -> {
                String claim = refs.containsKey(uid) ? refs.get(uid).toString() : Printable.of(uid, 64);
                if (error.isPresent()) {
                    failed.add(claim + ": " + Printable.of(error.get(), 300));
                } else if (prepare) {
                    List<PreparedDevice> devices = r.devices().getOrDefault(uid, List.of());
                    ok.add(claim + " " + devices.stream().map(PreparedDevice::device).toList());
                } else {
                    ok.add(claim);
                }
            });
            String verb = prepare ? "Prepared" : "Unprepared";
            if (!ok.isEmpty()) {
                LOG.info("{} {} claim(s): {}", verb, ok.size(), list(ok));
            }
            if (!failed.isEmpty()) {
                LOG.warn("{} failed for {} claim(s), which the kubelet retries: {}", prepare ? "Prepare" : "Unprepare",
                        failed.size(), list(failed));
            }
        }
    }

    /** At most {@value #CLAIMS_PER_LINE} entries, then how many more. */
    private static String list(List<String> entries) {
        String shown = String.join("; ", entries.subList(0, Math.min(CLAIMS_PER_LINE, entries.size())));
        return entries.size() <= CLAIMS_PER_LINE ? shown : shown + "; and " + (entries.size() - CLAIMS_PER_LINE)
                + " more";
    }
}
