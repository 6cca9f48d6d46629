package dev.vgpu.core;

import java.util.Objects;

/**
 * A device a source saw but does not advertise, with the reason a user can act on.
 *
 * @param id     the BDF, UUID or other identity the source saw (never null, may be any text)
 * @param source the source that skipped it
 * @param reason why, in words
 */
public record Skipped(String id, String source, String reason) {

    /** Validates that nothing is null or blank. */
    public Skipped {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(source, "source");
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a skip needs a reason");
        }
    }
}
