package dev.vgpu.daemon;

import dev.vgpu.core.Durations;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Periodic rediscovery: one scheduler thread rescans with a fixed delay (scans never overlap), plans the
 * difference from the current snapshot and hands both to the sink, which switches the allocation indexes
 * before advertising anything new.
 *
 * <p>Threads: {@code current} is owned by the scheduler thread after {@link #start()}; before that by the
 * caller. A failing round is logged and the next one runs as scheduled.
 */
final class RescanLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RescanLoop.class);

    private final Scanner scanner;
    private final SnapshotSink sink;
    private final Duration period;
    private final ScheduledExecutorService scheduler;
    private final Runnable beforeScan;
    private Snapshot current;

    RescanLoop(Scanner scanner, SnapshotSink sink, Duration period, Snapshot initial) {
        this(scanner, sink, period, initial, () -> { });
    }

    /**
     * @param beforeScan run on the rescan thread before each scan (e.g. retrying NVML while it is down); an
     *                   exception it throws fails that round like a failing scan
     */
    RescanLoop(Scanner scanner, SnapshotSink sink, Duration period, Snapshot initial, Runnable beforeScan) {
        this.scanner = scanner;
        this.sink = sink;
        this.period = period;
        this.current = initial;
        this.beforeScan = beforeScan;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "vgpu-rescan");
            t.setDaemon(true);
            return t;
        });
    }

    void start() {
        long nanos = period.toNanos();
        scheduler.scheduleWithFixedDelay(this::runOnce, nanos, nanos, TimeUnit.NANOSECONDS);
        LOG.info("rescanning every {}", Durations.formatGo(period));
    }

    /** One round; public to tests through the package. */
    void runOnce() {
        try {
            beforeScan.run();
            Snapshot next = scanner.scan(current);
            Plan plan = Reconciler.plan(current, next);
            if (!plan.isEmpty()) {
                // The sink logs one line per change (added, updated with ids in and out, removed).
                sink.apply(next, plan);
            } else {
                LOG.debug("rescan: no change ({} devices)", next.deviceCount());
            }
            current = next;
        } catch (RuntimeException e) {
            LOG.error("rescan round failed, keeping the current devices: {}", e.toString(), e);
        }
    }

    /** Runs one round on the rescan thread and waits for it. */
    void runNow() {
        try {
            scheduler.submit(this::runOnce).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("rescan round failed", e.getCause());
        }
    }

    /** Queues one round on the rescan thread and returns at once; does nothing after close. */
    void runSoon() {
        try {
            scheduler.execute(this::runOnce);
        } catch (RejectedExecutionException e) {
            LOG.debug("rescan not queued: the loop is closed");
        }
    }

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
