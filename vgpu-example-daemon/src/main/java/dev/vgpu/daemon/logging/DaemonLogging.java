package dev.vgpu.daemon.logging;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The daemon's SLF4J provider: one line per event on standard error, {@code 2026-12-06T02:12:25.552Z INFO Daemon -
 * message}, then the stack trace of a throwable, written in one call so that two threads' lines never interleave.
 * The level is INFO unless {@link #configure} was given another ({@code VGPU_LOG_LEVEL}); gRPC's Netty transport
 * logs WARN and above only. It replaces slf4j-simple, whose {@code SimpleDateFormat} made the JVM load its calendar
 * and locale providers at every start (about 15 ms of a cold {@code discover}; BENCHMARKS.md, "Start-up"): the time
 * here is formatted by hand from {@code java.time} values, which need no locale data.
 *
 * <p>Threads: any thread may log; loggers are made once per name and shared; the level is one volatile value, which
 * every logger reads at each call, so a {@link #configure} applies to loggers made before it too.
 */
public final class DaemonLogging implements SLF4JServiceProvider {

    /** The level of every logger but those of {@link #QUIET}; INFO unless configured. */
    private static volatile Level threshold = Level.INFO;
    /** Names, and their prefixes followed by a dot, that log only WARN and above: gRPC's transport is chatty. */
    private static final String QUIET = "io.grpc.netty";

    private final ILoggerFactory loggers = new Loggers();
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    /** Made by SLF4J's {@link java.util.ServiceLoader}. */
    public DaemonLogging() {
    }

    /**
     * Sets the level from {@code VGPU_LOG_LEVEL}'s value ({@code trace}, {@code debug}, {@code info}, {@code warn},
     * {@code error}, any case); anything else keeps the level as it is.
     *
     * @return false when the value names no level
     */
    public static boolean configure(String level) {
        if (level == null || level.isBlank()) {
            return true;
        }
        try {
            threshold = Level.valueOf(level.strip().toUpperCase(Locale.ROOT));
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggers;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        // nothing to read: the level is set by configure, the format is fixed
    }

    /** One logger per name. */
    private static final class Loggers implements ILoggerFactory {
        private final ConcurrentMap<String, Logger> byName = new ConcurrentHashMap<>();

        @Override
        public Logger getLogger(String name) {
            return byName.computeIfAbsent(name, StderrLogger::new);
        }
    }

    /** A logger that writes to {@code System.err} as it is when it writes (a test may have replaced it). */
    static final class StderrLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;

        private final String shortName;
        private final boolean quiet;

        StderrLogger(String name) {
            this.name = name;
            this.shortName = name.substring(name.lastIndexOf('.') + 1);
            this.quiet = name.equals(QUIET) || name.startsWith(QUIET + ".");
        }

        private boolean enabled(Level level) {
            Level floor = quiet && threshold.toInt() < Level.WARN.toInt() ? Level.WARN : threshold;
            return level.toInt() >= floor.toInt();
        }

        @Override
        public boolean isTraceEnabled() {
            return enabled(Level.TRACE);
        }

        @Override
        public boolean isDebugEnabled() {
            return enabled(Level.DEBUG);
        }

        @Override
        public boolean isInfoEnabled() {
            return enabled(Level.INFO);
        }

        @Override
        public boolean isWarnEnabled() {
            return enabled(Level.WARN);
        }

        @Override
        public boolean isErrorEnabled() {
            return enabled(Level.ERROR);
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                                   Throwable throwable) {
            StringBuilder line = new StringBuilder(128);
            timestamp(System.currentTimeMillis(), ZoneId.systemDefault(), line);
            line.append(' ').append(level.name()).append(' ').append(shortName).append(" - ")
                    .append(MessageFormatter.basicArrayFormat(pattern, arguments)).append('\n');
            if (throwable != null) {
                StringWriter trace = new StringWriter();
                throwable.printStackTrace(new PrintWriter(trace));
                line.append(trace);
            }
            System.err.print(line);
            System.err.flush();
        }
    }

    /**
     * {@code yyyy-MM-dd'T'HH:mm:ss.SSS} and the offset as {@code Z} or {@code +hh:mm} in the system's time zone: what
     * slf4j-simple printed with the daemon's pattern {@code yyyy-MM-dd'T'HH:mm:ss.SSSXXX}, for years 0 to 9999.
     */
    static void timestamp(long epochMillis, ZoneId zone, StringBuilder into) {
        ZoneOffset offset = zone.getRules().getOffset(java.time.Instant.ofEpochMilli(epochMillis));
        LocalDateTime local = LocalDateTime.ofEpochSecond(Math.floorDiv(epochMillis, 1000L),
                (int) Math.floorMod(epochMillis, 1000L) * 1_000_000, offset);
        pad(local.getYear(), 4, into).append('-');
        pad(local.getMonthValue(), 2, into).append('-');
        pad(local.getDayOfMonth(), 2, into).append('T');
        pad(local.getHour(), 2, into).append(':');
        pad(local.getMinute(), 2, into).append(':');
        pad(local.getSecond(), 2, into).append('.');
        pad(local.getNano() / 1_000_000, 3, into);
        int seconds = offset.getTotalSeconds();
        if (seconds == 0) {
            into.append('Z');
        } else {
            into.append(seconds < 0 ? '-' : '+');
            int minutes = Math.abs(seconds) / 60;
            pad(minutes / 60, 2, into).append(':');
            pad(minutes % 60, 2, into);
        }
    }

    private static StringBuilder pad(int value, int width, StringBuilder into) {
        String digits = Integer.toString(value);
        for (int i = digits.length(); i < width; i++) {
            into.append('0');
        }
        return into.append(digits);
    }
}
