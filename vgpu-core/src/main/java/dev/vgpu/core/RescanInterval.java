package dev.vgpu.core;

import dev.vgpu.core.internal.Durations;
import dev.vgpu.core.internal.GoText;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The effective rescan interval, and the policy that makes it from a configured value ({@link #parse(String)}): the
 * daemon's {@code VFIO_VGPU_RESCAN_INTERVAL} and {@code --rescan-interval}, and the same rule for anyone who embeds
 * a {@link RescanLoop} and reads the same setting.
 * <pre>{@code
 * RescanInterval interval = RescanInterval.parse(System.getenv("VFIO_VGPU_RESCAN_INTERVAL"));
 * interval.raisedFrom().ifPresent(raw -> log.warn("raised {} to {}", raw, interval.period()));
 * if (interval.enabled()) {
 *     new RescanLoop(scanner, plugins, interval.period(), first).start();
 * }
 * }</pre>
 *
 * @param period     the time from the start of one periodic round to the start of the next; zero when disabled
 * @param raisedFrom the configured value when it was below the floor and had to be raised
 */
public record RescanInterval(Duration period, Optional<Duration> raisedFrom) {

    /** Rescans are off. */
    public static final RescanInterval DISABLED = new RescanInterval(Duration.ZERO, Optional.empty());

    /** The shortest rescan interval; positive values below it are raised to it. */
    public static final Duration FLOOR = Duration.ofSeconds(5);

    /** Validates. */
    public RescanInterval {
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(raisedFrom, "raisedFrom");
        if (period.isNegative()) {
            throw new IllegalArgumentException("negative rescan period " + period);
        }
    }

    /**
     * Applies the rescan policy to a configured value: unset, blank or zero disables rescans; a positive value below
     * {@link #FLOOR} is raised to it. The value is a Go duration ({@link Durations#parseGo}); surrounding whitespace
     * is removed first, as Go's {@code strings.TrimSpace} does.
     *
     * @param raw the value as configured, may be null
     * @return the interval to use
     * @throws IllegalArgumentException quoting the input when it is malformed or negative
     */
    public static RescanInterval parse(String raw) {
        if (raw == null) {
            return DISABLED;
        }
        String text = GoText.trimSpace(raw);
        if (text.isEmpty()) {
            return DISABLED;
        }
        Duration parsed = Durations.parseGo(text);
        if (parsed.isNegative()) {
            throw new IllegalArgumentException("negative duration " + GoText.quote(text)
                    + " is not a rescan interval");
        }
        if (parsed.isZero()) {
            return DISABLED;
        }
        if (parsed.compareTo(FLOOR) < 0) {
            return new RescanInterval(FLOOR, Optional.of(parsed));
        }
        return new RescanInterval(parsed, Optional.empty());
    }

    /** True when periodic rescans run. */
    public boolean enabled() {
        return !period.isZero();
    }
}
