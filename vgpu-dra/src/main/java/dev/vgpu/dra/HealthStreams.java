package dev.vgpu.dra;

import dev.vgpu.core.internal.SerialContext;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's {@code DRAResourceHealth} streams of one plugin (docs/DRA.md, "Does (health stream)"): each open
 * stream gets the health of every device when it opens, after every change (of the verdicts or of the device list)
 * and again every refresh period (the kubelet takes a device it has not heard of for 30 s as unknown). What a device
 * reports comes from the owner ({@code reports}): unknown until the first health check, then healthy or unhealthy
 * with the reason as the message (at most {@value #MAX_MESSAGE} characters, as the kubelet keeps).
 *
 * <p>Bounded (docs/RELIABILITY.md, "DRA mode"): at most {@link DraLimits#healthStreamsPerConnection} open streams a
 * connection and {@link DraLimits#healthStreams} in all. A new stream beyond either bound is admitted and the oldest
 * of that connection, or of all, is ended with {@code RESOURCE_EXHAUSTED}: the kubelet's stream, reopened after a
 * restart, always gets in, and a client that opens streams it never reads holds at most the bound. A message is sent
 * only when flow control lets it go; a stream held back keeps one pending flag and gets the then-current list.
 *
 * <p>Threads: owned by the plugin's serial context, where every method runs and every message is sent; gRPC's
 * threads (a stream opened, ready, cancelled) only post. One DEBUG line per stream; INFO only when the first stream
 * opens or the last one ends.
 */
final class HealthStreams {

    /** The message of an unhealthy device given without a reason. */
    static final String UNHEALTHY_MESSAGE = "marked unhealthy by the vgpu daemon's health checks (its log says why)";
    /** The message of every device before the first verdict. */
    static final String UNKNOWN_MESSAGE = "not checked yet: the vgpu daemon's first health check has not run";
    /** The longest message the kubelet keeps. */
    static final int MAX_MESSAGE = 1024;

    private static final Logger LOG = LoggerFactory.getLogger(HealthStreams.class);

    /** One open stream of either API version; called in the context only. */
    interface Sink {
        /** Whether flow control lets a message go now. */
        boolean ready();

        void send(List<HealthReport> devices);

        void complete();

        /** Ends the stream with this status. */
        void fail(Status status);

        /** For log lines: the API version. */
        String describe();
    }

    private final SerialContext owner;
    private final DraLimits limits;
    private final LongFunction<List<HealthReport>> reports;
    private final java.time.Clock clock;
    private final Runnable countChanged;

    // Owner context only: open streams in the order they opened, each with its connection and pending flag.
    private final Map<Sink, Open> open = new LinkedHashMap<>();
    private List<String> sentNames = List.of();
    private boolean closed;

    private static final class Open {
        final long connection;
        boolean pending = true;

        Open(long connection) {
            this.connection = connection;
        }
    }

    /**
     * @param reports      every device's report at a time in Unix seconds, in the context
     * @param countChanged told in the context when a stream opened or ended
     */
    HealthStreams(SerialContext owner, DraLimits limits, LongFunction<List<HealthReport>> reports,
                  java.time.Clock clock, Runnable countChanged) {
        this.owner = owner;
        this.limits = limits;
        this.reports = reports;
        this.clock = clock;
        this.countChanged = countChanged;
    }

    /** A stream opened on {@code connection}; it gets the list at once. Any thread: posts. */
    void open(Sink sink, long connection) {
        owner.execute(() -> {
            if (closed) {
                sink.complete();
                return;
            }
            endOldest(e -> e.getValue().connection == connection, limits.healthStreamsPerConnection() - 1,
                    "this connection");
            endOldest(e -> true, limits.healthStreams() - 1, "this plugin");
            open.put(sink, new Open(connection));
            LOG.debug("A health stream opened ({}, connection {}); {} open", sink.describe(), connection, open.size());
            if (open.size() == 1) {
                LOG.info("The kubelet watches device health ({})", sink.describe());
            }
            flush(sink, reports.apply(now()));
            countChanged.run();
        });
    }

    /** A stream that flow control lets go again. Any thread: posts. */
    void ready(Sink sink) {
        owner.execute(() -> {
            Open state = open.get(sink);
            if (state != null && state.pending) {
                flush(sink, reports.apply(now()));
            }
        });
    }

    /** A stream the client cancelled or that broke: nothing more is sent on it. Any thread: posts. */
    void closed(Sink sink) {
        owner.execute(() -> {
            if (open.remove(sink) != null) {
                LOG.debug("A health stream ended ({}); {} open", sink.describe(), open.size());
                if (open.isEmpty()) {
                    LOG.info("No health stream is open any more");
                }
                countChanged.run();
            }
        });
    }

    /** How many streams are open. In the context. */
    int count() {
        return open.size();
    }

    /** The verdicts changed: every stream gets the list now. In the context. */
    void changed() {
        sendAll();
    }

    /** The device list may have changed: sent at once if it did. In the context. */
    void devicesChanged() {
        List<String> names = reports.apply(now()).stream().map(HealthReport::device).toList();
        if (!names.equals(sentNames)) {
            sendAll();
        }
    }

    /** The periodic refresh: every stream gets the list again. In the context. */
    void refresh() {
        sendAll();
    }

    /** Ends every stream normally; a stream opened later is ended at once. In the context. */
    void close() {
        closed = true;
        open.keySet().forEach(sink -> {
            try {
                sink.complete();
            } catch (RuntimeException e) {
                LOG.debug("Ending a health stream: {}", e.toString());
            }
        });
        open.clear();
    }

    /** Ends the oldest streams that {@code which} picks until at most {@code keep} of them remain. */
    private void endOldest(java.util.function.Predicate<Map.Entry<Sink, Open>> which, int keep, String where) {
        List<Sink> matching = new ArrayList<>();
        open.entrySet().stream().filter(which).forEach(e -> matching.add(e.getKey()));
        for (int i = 0; i < matching.size() - keep; i++) {
            Sink oldest = matching.get(i);
            open.remove(oldest);
            LOG.debug("Ending the oldest health stream of {} ({}): a newer one came", where, oldest.describe());
            try {
                oldest.fail(Status.RESOURCE_EXHAUSTED.withDescription("more health streams than "
                        + (where.equals("this connection") ? limits.healthStreamsPerConnection() + " on this connection"
                        : limits.healthStreams() + " on this plugin") + "; this, the oldest, is ended"));
            } catch (RuntimeException e) {
                LOG.debug("Ending a health stream: {}", e.toString());
            }
        }
    }

    private void sendAll() {
        if (open.isEmpty()) {
            return;
        }
        List<HealthReport> list = reports.apply(now());
        for (Sink sink : List.copyOf(open.keySet())) {
            open.get(sink).pending = true;
            flush(sink, list);
        }
    }

    private void flush(Sink sink, List<HealthReport> list) {
        if (!sink.ready()) {
            return;
        }
        try {
            sink.send(list);
            Open state = open.get(sink);
            if (state != null) {
                state.pending = false;
            }
            sentNames = list.stream().map(HealthReport::device).toList();
        } catch (RuntimeException e) {
            // A stream cancelled between ready() and send(): its cancel handler removes it.
            LOG.debug("Health stream {} refused a message: {}", sink.describe(), e.toString());
        }
    }

    private long now() {
        return clock.instant().getEpochSecond();
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
}
