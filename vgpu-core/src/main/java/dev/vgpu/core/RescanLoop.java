package dev.vgpu.core;

import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.Scanner;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Periodic rediscovery at a fixed rate: each periodic round starts one period after the previous one started (scans
 * never overlap; a round that overruns its period is followed at once by the next, without a burst of catch-up
 * rounds), and publishes as soon as it ends. It plans the difference from the current snapshot with
 * {@link Reconciler} and hands both to the sink, which switches the allocation indexes before advertising anything
 * new. A round without changes calls nothing.
 * <pre>{@code
 * Snapshot first = scanner.scan(Snapshot.empty());
 * plugins.apply(first);
 * try (RescanLoop loop = RescanLoop.builder(scanner, plugins).period(Duration.ofMinutes(1)).initial(first).build()) {
 *     loop.start();       // or loop.runNow() whenever a rescan is wanted, e.g. on SIGHUP
 *     ...
 * }
 * }</pre>
 *
 * <p>Threads: every round runs on the loop's scheduler, one at a time: by default its own thread
 * ({@code vgpu-rescan}), or the single-threaded scheduler an owner gives ({@link Builder#scheduler}), whose other tasks
 * then run between rounds, never during one. {@code current} is owned by that thread after {@link #start()}; before
 * that by the caller. Time is the builder's ticker ({@link System#nanoTime()} by default). A failing round (the
 * scanner or the sink throws) is logged and the next one runs as scheduled.
 */
public final class RescanLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RescanLoop.class);

    private final Scanner scanner;
    private final SnapshotSink sink;
    private final Duration period;
    private final ScheduledExecutorService scheduler;
    /** Whether {@link #scheduler} is this loop's own, which {@link #close()} shuts down. */
    private final boolean ownScheduler;
    private final LongSupplier ticker;
    private final ScanObserver observer;
    private final Runnable beforeScan;
    /** Set while a request from {@link #requestRescan()} waits to run; one is enough however many arrive. */
    private final AtomicBoolean requested = new AtomicBoolean();
    /** Set by {@link #close()}: rounds that were queued do nothing, and none is queued any more. */
    private volatile boolean closed;
    /** The next periodic round while one is scheduled; replaced by the loop's thread, cancelled by close. */
    private volatile Future<?> periodic;
    /** The ticker's time when the running round started, or 0 when none runs (written by the loop thread). */
    private volatile long roundStarted;
    /** When the next periodic round is due (the ticker's time); owned by the loop's thread after start. */
    private long nextDue;
    /** Written by the loop's thread (or the caller before {@link #start()}); volatile so others may read it. */
    private volatile Snapshot current;

    /**
     * A loop that is not running yet: {@link #start()} schedules it, {@link #runNow()} runs single rounds.
     *
     * @param scanner the scanner to run
     * @param sink    receives each changed snapshot with its plan
     * @param period  the time from the start of one periodic round to the start of the next; positive
     * @param initial the snapshot the sink holds now (what the first round is compared with)
     */
    public RescanLoop(Scanner scanner, SnapshotSink sink, Duration period, Snapshot initial) {
        this(builder(scanner, sink).period(period).initial(initial));
    }

    /**
     * A loop that is not running yet, reporting every round to {@code observer}.
     *
     * @param scanner  the scanner to run
     * @param sink     receives each changed snapshot with its plan
     * @param period   the time from the start of one periodic round to the start of the next; positive
     * @param initial  the snapshot the sink holds now (what the first round is compared with)
     * @param observer hears how each round went
     */
    public RescanLoop(Scanner scanner, SnapshotSink sink, Duration period, Snapshot initial, ScanObserver observer) {
        this(builder(scanner, sink).period(period).initial(initial).observer(observer));
    }

    /**
     * A loop that is not running yet, reporting every round to {@code observer} and running {@code beforeScan}
     * first in every round.
     *
     * @param scanner    the scanner to run
     * @param sink       receives each changed snapshot with its plan
     * @param period     the time from the start of one periodic round to the start of the next; positive
     * @param initial    the snapshot the sink holds now (what the first round is compared with)
     * @param observer   hears how each round went
     * @param beforeScan runs on the loop's thread before each scan (the daemon retries NVML there while it is
     *                   down); an exception it throws fails that round like a failing scan
     */
    public RescanLoop(Scanner scanner, SnapshotSink sink, Duration period, Snapshot initial, ScanObserver observer,
                      Runnable beforeScan) {
        this(builder(scanner, sink).period(period).initial(initial).observer(observer).beforeScan(beforeScan));
    }

    private RescanLoop(Builder b) {
        this.scanner = b.scanner;
        this.sink = b.sink;
        this.period = b.period;
        this.current = b.initial;
        this.observer = b.observer;
        this.beforeScan = b.beforeScan;
        this.ticker = b.ticker;
        this.ownScheduler = b.scheduler == null;
        this.scheduler = ownScheduler ? Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "vgpu-rescan");
            t.setDaemon(true);
            return t;
        }) : b.scheduler;
    }

    /**
     * A loop of {@code scanner}'s rounds into {@code sink}, configured by the builder (a period of one minute, the
     * empty snapshot, no observer, nothing before each scan, its own thread and {@link System#nanoTime()} unless
     * told otherwise).
     */
    public static Builder builder(Scanner scanner, SnapshotSink sink) {
        return new Builder(scanner, sink);
    }

    /** Configures a {@link RescanLoop}; not thread-safe. */
    public static final class Builder {
        private final Scanner scanner;
        private final SnapshotSink sink;
        private Duration period = Duration.ofMinutes(1);
        private Snapshot initial = Snapshot.empty();
        private ScanObserver observer = ScanObserver.NONE;
        private Runnable beforeScan = () -> { };
        private ScheduledExecutorService scheduler;
        private LongSupplier ticker = System::nanoTime;

        private Builder(Scanner scanner, SnapshotSink sink) {
            this.scanner = Objects.requireNonNull(scanner, "scanner");
            this.sink = Objects.requireNonNull(sink, "sink");
        }

        /** The time from the start of one periodic round to the start of the next (a fixed rate); positive. */
        public Builder period(Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("rescan period must be positive, got " + value);
            }
            period = value;
            return this;
        }

        /** The snapshot the sink holds now: what the first round is compared with. */
        public Builder initial(Snapshot value) {
            initial = Objects.requireNonNull(value, "initial");
            return this;
        }

        /** Hears how each round went. */
        public Builder observer(ScanObserver value) {
            observer = Objects.requireNonNull(value, "observer");
            return this;
        }

        /**
         * Runs on the loop's thread before each scan; an exception it throws fails that round like a failing scan.
         */
        public Builder beforeScan(Runnable value) {
            beforeScan = Objects.requireNonNull(value, "beforeScan");
            return this;
        }

        /**
         * The scheduler that runs every round; it must run one task at a time (a single thread), so that rounds and
         * its owner's other tasks never overlap. Not shut down by {@link #close()}: the owner does that. By default
         * the loop makes its own daemon thread, {@code vgpu-rescan}.
         */
        public Builder scheduler(ScheduledExecutorService value) {
            scheduler = Objects.requireNonNull(value, "scheduler");
            return this;
        }

        /** Monotonic nanoseconds, for the period and {@link #runningFor()}: {@link System#nanoTime()} by default. */
        public Builder ticker(LongSupplier value) {
            ticker = Objects.requireNonNull(value, "ticker");
            return this;
        }

        /** The loop, not running yet. */
        public RescanLoop build() {
            return new RescanLoop(this);
        }
    }

    /** Schedules a round every period, the first one period from now. */
    public void start() {
        long nanos = period.toNanos();
        nextDue = ticker.getAsLong() + nanos;
        schedulePeriodic(nanos);
        LOG.info("rescanning every {}", GoDurations.format(period));
    }

    /**
     * One periodic round, then the next one at the previous start plus the period (a fixed rate, not a fixed delay
     * after the scan), or at once when this round overran its slot. Unlike {@code scheduleAtFixedRate}, slots
     * missed during a long round are dropped rather than run back to back.
     */
    private void periodicRound() {
        if (closed) {
            return;
        }
        runOnce();
        long now = ticker.getAsLong();
        nextDue += period.toNanos();
        if (nextDue - now < 0) {
            nextDue = now;
        }
        schedulePeriodic(nextDue - now);
    }

    private void schedulePeriodic(long delayNanos) {
        if (closed) {
            return;
        }
        try {
            periodic = scheduler.schedule(this::periodicRound, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debug("rescan loop closed; no further periodic rounds");
        }
    }

    /**
     * Asks for one round as soon as the loop's thread is free (at once when idle), without waiting for it.
     * Requests that arrive while one is already waiting are folded into it; a request that arrives during a
     * round gets one more round after it, since the change may have come after that round read its files.
     * Works whether or not {@link #start()} was called (periodic rescans may be off). Never blocks.
     *
     * @return false when a request was already waiting (this one was folded into it)
     */
    public boolean requestRescan() {
        if (closed || !requested.compareAndSet(false, true)) {
            return false;
        }
        try {
            scheduler.execute(() -> {
                requested.set(false);
                if (!closed) {
                    runOnce();
                }
            });
        } catch (RejectedExecutionException e) {
            requested.set(false); // closed
        }
        return true;
    }

    /**
     * The snapshot the last successful round delivered (or the initial one): what the sink holds now.
     *
     * @return the current snapshot
     */
    public Snapshot current() {
        return current;
    }

    /**
     * How long the round in progress has been running, for a liveness check; empty when no round runs.
     *
     * @return the running time of the current round
     */
    public java.util.Optional<Duration> runningFor() {
        long started = roundStarted;
        return started == 0 ? java.util.Optional.empty() : java.util.Optional.of(Duration.ofNanos(ticker.getAsLong()
                - started));
    }

    /** One round; public to tests through the package. */
    void runOnce() {
        long started = ticker.getAsLong();
        roundStarted = started == 0 ? 1 : started;
        try {
            beforeScan.run();
            Scanner.Result result = scanner.run(current);
            Snapshot next = result.snapshot();
            Plan plan = Reconciler.plan(current, next);
            if (!plan.isEmpty()) {
                // The sink logs one line per change (added, updated with ids in and out, removed).
                sink.apply(next, plan);
            } else {
                LOG.debug("rescan: no change ({} devices)", next.deviceCount());
            }
            current = next;
            roundStarted = 0;
            tell(() -> observer.scanned(Duration.ofNanos(ticker.getAsLong() - started), result));
        } catch (VirtualMachineError e) {
            LOG.error("rescan round hit a fatal JVM error; rescans stop: {}", e.toString(), e);
            throw e;
        } catch (Throwable e) {
            // A periodic task that throws is cancelled silently: catch everything so the schedule goes on.
            LOG.error("rescan round failed, keeping the current devices: {}", e.toString(), e);
            roundStarted = 0;
            tell(() -> observer.roundFailed(Duration.ofNanos(ticker.getAsLong() - started), e));
        }
    }

    private static void tell(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.warn("scan observer failed: {}", e.toString());
        }
    }

    /**
     * Runs one round on the rescan thread and waits for it; rounds never overlap.
     *
     * @throws RejectedExecutionException after {@link #close()}
     */
    public void runNow() {
        if (closed) {
            throw new RejectedExecutionException("the rescan loop is closed");
        }
        try {
            scheduler.submit(this::runOnce).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("rescan round failed", e.getCause());
        }
    }

    /**
     * Stops the rounds: none is scheduled or started any more. The loop's own thread is stopped, interrupting a running
     * round, and waited for up to 2 s; a scheduler given to the builder is left to its owner, who stops it. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        Future<?> next = periodic;
        if (next != null) {
            next.cancel(false);
        }
        if (!ownScheduler) {
            return;
        }
        scheduler.shutdownNow();
        try {
            if (!scheduler.awaitTermination(2, TimeUnit.SECONDS)) {
                LOG.warn("rescan thread did not stop within 2 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
