package dev.vgpu.dra;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.SerialContext;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The prepared claims, owned by the plugin's serial context (docs/ARCHITECTURE.md, "Threads and mutable state"):
 * the map the checkpoint holds and the calls waiting to change it. Calls run one at a time in the order they came,
 * as the Go helper serializes them: for each, the owner hands plain values (the claims held, the snapshot, the
 * claims already read) to the claim-files lane, which runs {@link ClaimPreparer} (files, checkpoint) and posts the
 * result back; the owner takes the new map, answers, and starts the next. A call whose client has gone (the kubelet's
 * deadline passed, or it cancelled) is skipped before any work.
 *
 * <p>Threads: every method runs in the owner context; {@link #held()} is published for any thread (the calls' front
 * asks it which claims need no read).
 */
final class PreparedClaims {

    /**
     * One call waiting for its turn.
     *
     * @param reread whether the claims it lacked were read once more already (see {@link #next})
     */
    record Call(boolean prepare, List<ClaimRef> claims, Map<String, ClaimReader.Answer> reads,
                io.grpc.Context client, Consumer<Optional<ClaimPreparer.Result>> answer, boolean reread) {
        Call {
            claims = List.copyOf(claims);
            reads = Map.copyOf(reads);
            Objects.requireNonNull(client, "client");
            Objects.requireNonNull(answer, "answer");
        }
    }

    private final SerialContext owner;
    private final SerialContext filesLane;
    private final ClaimPreparer preparer;
    private final Supplier<Snapshot> snapshot;
    private final Runnable changed;
    private final java.util.function.BiConsumer<Call, List<ClaimRef>> reread;

    // Owner context only.
    private Map<String, PreparedClaim> claims;
    private final Deque<Call> waiting = new ArrayDeque<>();
    private boolean busy;
    /** The UIDs prepared now, for any thread. */
    private volatile Set<String> held;

    /**
     * @param restored what the checkpoint held at start
     * @param snapshot the owner's snapshot (read in the context)
     * @param changed  told in the context after every change of the prepared claims
     * @param reread   reads a call's claims that are neither prepared nor read (outside the context) and submits the
     *                 call again with them
     */
    PreparedClaims(SerialContext owner, SerialContext filesLane, ClaimPreparer preparer,
                   Map<String, PreparedClaim> restored, Supplier<Snapshot> snapshot, Runnable changed,
                   java.util.function.BiConsumer<Call, List<ClaimRef>> reread) {
        this.owner = owner;
        this.filesLane = filesLane;
        this.preparer = preparer;
        this.snapshot = snapshot;
        this.changed = changed;
        this.reread = reread;
        this.claims = new LinkedHashMap<>(restored);
        this.held = Set.copyOf(restored.keySet());
    }

    /** The UIDs of the claims prepared now; any thread, never waits (a call later may change it). */
    Set<String> held() {
        return held;
    }

    /** How many claims are prepared now. In the context. */
    int count() {
        return claims.size();
    }

    /** Queues a call; it runs after every call queued before it. In the context. */
    void submit(Call call) {
        owner.checkInContext();
        waiting.add(call);
        next();
    }

    /**
     * Starts the next call unless one runs; skips calls whose client has gone. A Prepare that came without reading a
     * claim prepared then, which an Unprepare has removed since, has that claim read first (once): the kubelet's
     * Prepare after an Unprepare prepares it again. In the context.
     */
    private void next() {
        while (!busy && !waiting.isEmpty()) {
            Call call = waiting.poll();
            if (call.client().isCancelled()) {
                call.answer().accept(Optional.empty());
                continue;
            }
            if (call.prepare() && !call.reread()) {
                List<ClaimRef> unread = call.claims().stream().filter(r -> !claims.containsKey(r.uid())
                        && !call.reads().containsKey(r.uid())).toList();
                if (!unread.isEmpty()) {
                    reread.accept(call, unread);
                    continue;
                }
            }
            busy = true;
            Map<String, PreparedClaim> now = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(claims));
            Snapshot devices = snapshot.get();
            filesLane.execute(() -> {
                ClaimPreparer.Result result = null;
                try {
                    result = call.prepare() ? preparer.prepare(call.claims(), call.reads(), devices, now)
                            : preparer.unprepare(call.claims(), now);
                } finally {
                    // Whatever happened on the lane, the owner takes the next call (an empty result: the call failed).
                    Optional<ClaimPreparer.Result> done = Optional.ofNullable(result);
                    owner.execute(() -> finish(call, done));
                }
            });
        }
    }

    private void finish(Call call, Optional<ClaimPreparer.Result> result) {
        busy = false;
        result.ifPresent(r -> {
            claims = new LinkedHashMap<>(r.claims());
            held = Set.copyOf(claims.keySet());
            changed.run();
        });
        try {
            call.answer().accept(result);
        } finally {
            next();
        }
    }
}
