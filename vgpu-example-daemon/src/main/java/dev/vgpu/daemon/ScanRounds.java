package dev.vgpu.daemon;

import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.SnapshotSink;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.nvml.RecoveringNvml;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;

/**
 * The discovery rounds both {@code serve} modes run the same way, whatever receives their snapshots (the device
 * plugins, or the DRA plugin and its slices): the loop with its per-round hooks, the rescan a SIGHUP asks for, and what
 * starts once the first scan is served (XID events, then periodic rescans or NVML retries).
 */
final class ScanRounds {

    /** How often NVML is tried again when no rescan does it (rescans off). */
    static final Duration NVML_RETRY_WITHOUT_RESCANS = Duration.ofMinutes(1);

    private ScanRounds() {
    }

    /** One WARN when the configured interval was raised to the floor. */
    static void warnIfRaised(RescanInterval interval, Logger log) {
        interval.raisedFrom().ifPresent(raw -> log.warn("rescan interval {} is below the {} floor; using {}",
                GoDurations.format(raw), GoDurations.format(RescanInterval.FLOOR),
                GoDurations.format(interval.period())));
    }

    /**
     * The loop that runs every round on its own thread, the first scan too (so the liveness probe sees it if it
     * hangs). Before each round NVML is tried again while it is down, and the configuration is read again when a
     * SIGHUP asked; a SIGHUP's new configuration applies from that round on.
     */
    static RescanLoop loop(Scanner scanner, SnapshotSink sink, RescanInterval interval, FailedScans failedScans,
                           LiveConfig live, RecoveringNvml nvml) {
        return new RescanLoop(scanner, sink, interval.enabled() ? interval.period() : RescanInterval.FLOOR,
                Snapshot.empty(), failedScans, () -> {
                    live.reloadIfRequested();
                    nvml.retry();
                });
    }

    /**
     * A SIGHUP asks for a reload (read on the rescan thread, before the round it asks for) and a rescan. In place
     * before the first scan, so that a SIGHUP once "serving" is logged is never the JVM's default (an exit).
     */
    private static void rescanOnHangup(Metrics metrics, LiveConfig live, RescanLoop loop, Logger log) {
        Signals.onHangup(() -> {
            metrics.rescanRequested();
            live.requestReload();
            log.info("SIGHUP: rescanning now{}", loop.requestRescan() ? "" : " (a rescan is already waiting)");
        });
    }

    /**
     * SIGHUP rescans from now on ({@link #rescanOnHangup}), then the first scan, on the caller's thread; false when
     * the daemon was closed before or during it (nothing more to start).
     */
    static boolean firstScan(Metrics metrics, LiveConfig live, RescanLoop loop, BooleanSupplier closed, Logger log) {
        rescanOnHangup(metrics, live, loop, log);
        log.info("first scan of the host");
        try {
            loop.runNow();
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return false; // closed during start
        }
        return !closed.getAsBoolean();
    }

    /**
     * Why the rounds make the daemon not live, in either mode: a round stuck past its deadline, or too many failed
     * rounds in a row.
     */
    static List<String> liveness(RescanLoop loop, Duration deadline, FailedScans failedScans) {
        List<String> problems = new ArrayList<>();
        failedScans.problem().ifPresent(problems::add);
        loop.runningFor().filter(running -> running.compareTo(deadline) > 0).ifPresent(running -> problems.add(
                "a discovery round has been running for " + GoDurations.format(running.truncatedTo(
                        ChronoUnit.SECONDS)) + ", longer than its deadline " + GoDurations.format(deadline)
                        + " (is a sysfs read blocked?)"));
        return problems;
    }

    /**
     * After the first scan: waits for NVML's first attempt (it may run beside the first scan); then XID events to
     * {@code marks} (now, or once NVML is up; nothing when the configuration turns XID health off), then periodic
     * rescans or, without them, NVML's own retry thread and one rescan when it comes up (to name what only NVML can
     * name). Nothing of that once {@code stopped} says the daemon stopped meanwhile.
     */
    static void afterFirstScan(RescanInterval interval, LiveConfig live, RecoveringNvml nvml, RescanLoop loop,
                               Metrics metrics, XidHealth.Marks marks, BooleanSupplier stopped, Logger log) {
        nvml.awaitFirstAttempt();
        if (stopped.getAsBoolean()) {
            return; // stopped while NVML loaded: nothing more to start
        }
        if (!live.xidPolicy().watch(nvml, new XidHealth(metrics, marks))) {
            log.info("XID health off: health.xid.enabled is false in the configuration; no NVML event is registered");
        }
        if (interval.enabled()) {
            loop.start();
        } else {
            nvml.onRecovery(loop::requestRescan);
            nvml.retryEvery(NVML_RETRY_WITHOUT_RESCANS);
        }
    }
}
