package dev.vgpu.dra;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Threads;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's {@code DRAResourceHealth} streams of one plugin (docs/DRA.md, "Does (health stream)"): each open
 * stream gets the health of every device of the current snapshot when it opens, after every change (of the
 * unhealthy ids or of the device list) and again every {@code refresh} (the kubelet takes a device it has not heard
 * of for 30 s as unknown). Until
 * the first {@link #health} every device is {@code UNKNOWN} (its message says it is not checked yet): a restarted
 * plugin must not call a faulty device healthy before its checks have run. After it, a device is unhealthy when its
 * id is in the map last given to {@link #health}, with that map's reason as the message (at most
 * {@value #MAX_MESSAGE} characters, as the kubelet keeps), healthy otherwise.
 *
 * <p>Threads: the one health thread ({@value #THREAD_NAME}) owns the open streams, the unhealthy ids and the
 * device names last sent; gRPC's threads (a stream opened, ready, cancelled) and the plugin's callers
 * ({@link #health}, {@link #snapshotChanged}) only post to it, so every message of a stream is sent from that thread.
 * A stream that flow control holds back keeps one pending flag and gets the then-current list when it is ready.
 */
final class HealthStreams implements AutoCloseable {

    /** How often an unchanged list is sent again: well inside the kubelet's 30 s. */
    static final Duration REFRESH = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(HealthStreams.class);
    /** The message of an unhealthy device given without a reason. */
    static final String UNHEALTHY_MESSAGE = "marked unhealthy by the vgpu daemon's health checks (its log says why)";
    /** The message of every device before the first verdict. */
    static final String UNKNOWN_MESSAGE = "not checked yet: the vgpu daemon's first health check has not run";
    /** The longest message the kubelet keeps. */
    static final int MAX_MESSAGE = 1024;

    /**
     * One open stream of either API version. Called on the health thread only, but for {@link #complete} of a stream
     * opened after the health thread stopped, which its opener ends.
     */
    interface Sink {
        /** Whether flow control lets a message go now. */
        boolean ready();

        void send(List<HealthReport> devices);

        void complete();

        /** For log lines: the API version and the peer. */
        String describe();
    }

    private final String pool;
    private final Supplier<Snapshot> snapshot;
    private final Clock clock;
    private final ScheduledThreadPoolExecutor thread;
    // Health thread only.
    private final Map<Sink, Boolean> pendingBySink = new HashMap<>();
    /** Unhealthy device id → its message; null until the first verdict. */
    private Map<String, String> unhealthy;
    private List<String> sentNames = List.of();

    /** The health thread's name, unless a caller's factory names it. */
    static final String THREAD_NAME = "vgpu-dra-health-stream";

    HealthStreams(String pool, Supplier<Snapshot> snapshot, Clock clock, Duration refresh,
                  java.util.concurrent.ThreadFactory threads) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.snapshot = Objects.requireNonNull(snapshot, "snapshot");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.thread = Threads.owner(Objects.requireNonNull(threads, "threads"));
        long millis = refresh.toMillis();
        thread.scheduleWithFixedDelay(() -> sendAll(false), millis, millis, TimeUnit.MILLISECONDS);
    }

    /** A stream the kubelet opened: it gets the list at once. Any thread. */
    void open(Sink sink) {
        boolean taken = post(() -> {
            pendingBySink.put(sink, true);
            LOG.info("The kubelet watches device health ({}); {} stream(s) open", sink.describe(),
                    pendingBySink.size());
            flush(sink, reports());
        });
        if (!taken) {
            // Closed: the stream ends now, on the opener's thread (no health thread is left to own it), instead of
            // waiting for a list that never comes.
            try {
                sink.complete();
            } catch (RuntimeException e) {
                LOG.debug("Ending a health stream opened after close: {}", e.toString());
            }
        }
    }

    /** A stream that flow control lets go again. Any thread. */
    void ready(Sink sink) {
        post(() -> {
            if (Boolean.TRUE.equals(pendingBySink.get(sink))) {
                flush(sink, reports());
            }
        });
    }

    /** A stream the kubelet cancelled or that broke: nothing more is sent on it. Any thread. */
    void closed(Sink sink) {
        post(() -> {
            if (pendingBySink.remove(sink) != null) {
                LOG.info("The kubelet stopped watching device health ({}); {} stream(s) open", sink.describe(),
                        pendingBySink.size());
            }
        });
    }

    /** Exactly the devices with these ids are unhealthy from now on, each for its reason. Any thread; returns at once. */
    void health(Map<String, String> reasonsById) {
        Map<String, String> copy = new HashMap<>();
        reasonsById.forEach((id, reason) -> copy.put(id, message(reason)));
        post(() -> {
            if (!copy.equals(unhealthy)) {
                unhealthy = copy;
                sendAll(true);
            }
        });
    }

    /** The plugin took a new snapshot: a changed device list is sent at once. Any thread. */
    void snapshotChanged() {
        post(() -> {
            List<String> names = reports().stream().map(HealthReport::device).toList();
            if (!names.equals(sentNames)) {
                sendAll(true);
            }
        });
    }

    /** Ends every stream normally and stops the health thread (waits a few seconds at most). */
    @Override
    public void close() {
        post(() -> {
            pendingBySink.keySet().forEach(sink -> {
                try {
                    sink.complete();
                } catch (RuntimeException e) {
                    LOG.debug("Ending a health stream: {}", e.toString());
                }
            });
            pendingBySink.clear();
        });
        Threads.stop(thread, Duration.ofSeconds(5));
    }

    /** False when the health thread has stopped and the task was dropped. */
    private boolean post(Runnable task) {
        try {
            thread.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            LOG.debug("Health update after close ignored");
            return false;
        }
    }

    private void sendAll(boolean changed) {
        List<HealthReport> reports = reports();
        if (changed) {
            long count = reports.stream().filter(r -> r.status() == HealthReport.Status.UNHEALTHY).count();
            LOG.debug("Device health to {} stream(s): {} device(s), {} unhealthy", pendingBySink.size(),
                    reports.size(), count);
        }
        for (Sink sink : List.copyOf(pendingBySink.keySet())) {
            pendingBySink.put(sink, true);
            flush(sink, reports);
        }
    }

    private void flush(Sink sink, List<HealthReport> reports) {
        if (!sink.ready()) {
            return;
        }
        try {
            sink.send(reports);
            pendingBySink.put(sink, false);
            sentNames = reports.stream().map(HealthReport::device).toList();
        } catch (RuntimeException e) {
            // A stream cancelled between ready() and send(): its cancel handler removes it.
            LOG.debug("Health stream {} refused a message: {}", sink.describe(), e.toString());
        }
    }

    /** The kubelet's message for a reason: the generic one for none, cut to {@value #MAX_MESSAGE} characters. */
    static String message(String reason) {
        if (reason == null || reason.isBlank()) {
            return UNHEALTHY_MESSAGE;
        }
        String text = reason.strip();
        if (text.length() <= MAX_MESSAGE) {
            return text;
        }
        int end = MAX_MESSAGE - 3;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a pair
        }
        return text.substring(0, end) + "...";
    }

    /** Every device of the current snapshot, sorted by name. */
    private List<HealthReport> reports() {
        long now = clock.instant().getEpochSecond();
        List<HealthReport> reports = new ArrayList<>();
        snapshot.get().resources().values().forEach(r -> r.devices().forEach(d -> {
            String name = DeviceNames.of(d);
            String message = unhealthy == null ? UNKNOWN_MESSAGE : unhealthy.getOrDefault(d.id(), "");
            HealthReport.Status status = unhealthy == null ? HealthReport.Status.UNKNOWN
                    : message.isEmpty() ? HealthReport.Status.HEALTHY : HealthReport.Status.UNHEALTHY;
            reports.add(new HealthReport(pool, name, status, now, message));
        }));
        reports.sort(Comparator.comparing(HealthReport::device));
        return reports;
    }
}
