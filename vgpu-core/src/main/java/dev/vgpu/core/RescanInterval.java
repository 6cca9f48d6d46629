package dev.vgpu.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The effective rescan interval, from {@link Durations#rescanInterval(String)}.
 *
 * @param period     the time between the end of one scan and the start of the next; zero when disabled
 * @param raisedFrom the configured value when it was below the floor and had to be raised
 */
public record RescanInterval(Duration period, Optional<Duration> raisedFrom) {

    /** Rescans are off. */
    public static final RescanInterval DISABLED = new RescanInterval(Duration.ZERO, Optional.empty());

    /** Validates. */
    public RescanInterval {
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(raisedFrom, "raisedFrom");
        if (period.isNegative()) {
            throw new IllegalArgumentException("negative rescan period " + period);
        }
    }

    /** True when periodic rescans run. */
    public boolean enabled() {
        return !period.isZero();
    }
}
