package dev.vgpu.core;

import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.Scanner;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Periodic rediscovery: one scheduler thread ({@code vgpu-rescan}) rescans at a fixed rate, each round starting
 * one period after the previous one started (scans never overlap; a round that overruns its period is followed at
 * once by the next, without a burst of catch-up rounds), and publishes as soon as the round ends. It plans the difference from the current snapshot with {@link Reconciler} and hands both to the sink,
 * which switches the allocation indexes before advertising anything new. A round without changes calls nothing.
 * <pre>{@code
 * Snapshot first = scanner.scan(Snapshot.empty());
 * plugins.apply(first);
 * try (RescanLoop loop = new RescanLoop(scanner, plugins, Duration.ofMinutes(1), first)) {
 *     loop.start();       // or loop.runNow() whenever a rescan is wanted, e.g. on SIGHUP
 *     ...
 * }
 * }</pre>
 *
 * <p>Threads: {@code current} is owned by the scheduler thread after {@link #start()}; before that by the
 * caller. A failing round (the scanner or the sink throws) is logged and the next one runs as scheduled.
 */
public final class RescanLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RescanLoop.class);

    private final Scanner scanner;
    private final SnapshotSink sink;
    private final Duration period;
    private final ScheduledExecutorService scheduler;
    private final ScanObserver observer;
    private final Runnable beforeScan;
    /** Set while a request from {@link #requestRescan()} waits to run; one is enough however many arrive. */
    private final AtomicBoolean requested = new AtomicBoolean();
    /** {@link System#nanoTime()} when the running round started, or 0 when none runs (written by the loop thread). */
    private volatile long roundStarted;
    /** When the next periodic round is due ({@link System#nanoTime()}); owned by the loop's thread after start. */
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
        this(scanner, sink, period, initial, ScanObserver.NONE);
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
        this(scanner, sink, period, initial, observer, () -> { });
    }

    /**
     * A loop that is not running yet, reporting every round to {@code observer} and running {@code beforeScan}
     * first in every round.
     *
     * @param scanner    the scanner to run
     * @param sink       receives each changed snapshot with its plan
     * @param period     the delay between the end of one round and the start of the next; positive
     * @param initial    the snapshot the sink holds now (what the first round is compared with)
     * @param observer   hears how each round went
     * @param beforeScan runs on the loop's thread before each scan (the daemon retries NVML there while it is
     *                   down); an exception it throws fails that round like a failing scan
     */
    public RescanLoop(Scanner scanner, SnapshotSink sink, Duration period, Snapshot initial, ScanObserver observer,
                      Runnable beforeScan) {
        this.observer = Objects.requireNonNull(observer, "observer");
        this.beforeScan = Objects.requireNonNull(beforeScan, "beforeScan");
        if (period == null || period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("rescan period must be positive, got " + period);
        }
        this.scanner = Objects.requireNonNull(scanner, "scanner");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.period = period;
        this.current = Objects.requireNonNull(initial, "initial");
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "vgpu-rescan");
            t.setDaemon(true);
            return t;
        });
    }

    /** Schedules a round every period, the first one period from now. */
    public void start() {
        long nanos = period.toNanos();
        nextDue = System.nanoTime() + nanos;
        schedulePeriodic(nanos);
        LOG.info("rescanning every {}", GoDurations.format(period));
    }

    /**
     * One periodic round, then the next one at the previous start plus the period (a fixed rate, not a fixed delay
     * after the scan), or at once when this round overran its slot. Unlike {@code scheduleAtFixedRate}, slots
     * missed during a long round are dropped rather than run back to back.
     */
    private void periodicRound() {
        runOnce();
        long now = System.nanoTime();
        nextDue += period.toNanos();
        if (nextDue - now < 0) {
            nextDue = now;
        }
        schedulePeriodic(nextDue - now);
    }

    private void schedulePeriodic(long delayNanos) {
        try {
            scheduler.schedule(this::periodicRound, delayNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
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
        if (!requested.compareAndSet(false, true)) {
            return false;
        }
        try {
            scheduler.execute(() -> {
                requested.set(false);
                runOnce();
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
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
        return started == 0 ? java.util.Optional.empty() : java.util.Optional.of(Duration.ofNanos(System.nanoTime()
                - started));
    }

    /** One round; public to tests through the package. */
    void runOnce() {
        long started = System.nanoTime();
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
            tell(() -> observer.scanned(Duration.ofNanos(System.nanoTime() - started), result));
        } catch (VirtualMachineError e) {
            LOG.error("rescan round hit a fatal JVM error; rescans stop: {}", e.toString(), e);
            throw e;
        } catch (Throwable e) {
            // A periodic task that throws is cancelled silently: catch everything so the schedule goes on.
            LOG.error("rescan round failed, keeping the current devices: {}", e.toString(), e);
            roundStarted = 0;
            tell(() -> observer.roundFailed(Duration.ofNanos(System.nanoTime() - started), e));
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
     * @throws java.util.concurrent.RejectedExecutionException after {@link #close()}
     */
    public void runNow() {
        try {
            scheduler.submit(this::runOnce).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("rescan round failed", e.getCause());
        }
    }

    /** Stops the rescan thread, interrupting a running round, and waits up to 2 s for it. Idempotent. */
    @Override
    public void close() {
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
