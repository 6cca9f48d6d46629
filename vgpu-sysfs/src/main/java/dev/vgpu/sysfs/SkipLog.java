package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Discovery;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;

/**
 * What a source instance's last completed scan logged as skips, so that a rescan of an unchanged host does not
 * repeat them at WARN (docs/RELIABILITY.md, "Host files"): the keys of that scan's WARN-eligible
 * skips (its first {@value Discovery#LISTED_SKIPS}, at most that many keys) and the text of its summary line, if it
 * had one, and the host root it scanned. One per source instance, handed to every {@link Scan} of it; a fresh
 * instance remembers nothing, so its first scan logs every skip as a first appearance, and so does a scan of another
 * host root than the last one (an embedding user may scan several roots with one instance).
 *
 * <p>Threads: a source's {@code discover} may run on several threads at once. Each {@link Scan} reads
 * {@link #last()} once, when it is created, and owns that immutable value for its whole run; its own keys are
 * confined to its thread until {@link Scan#done()} publishes them whole through {@link #publish}; this object owns
 * only the one volatile reference, and no lock is held during a scan. The last scan to finish wins. What a race can
 * do: two overlapping scans both read an older value, so a repeat may be logged at WARN again, or a skip that an
 * overlapping scan did not see may be logged at DEBUG by a scan that started before that scan finished (it was
 * WARN in an earlier completed scan). What it cannot do: quiet a skip's first appearance, since a scan logs at
 * DEBUG only a key that a scan completed before it started had already seen; and a scan that throws before
 * {@code done()} publishes nothing.
 */
final class SkipLog {

    /**
     * One skip as logged: the device id and the reason, compared as strings.
     *
     * @param id     the skipped device's id
     * @param reason why it was skipped
     */
    record Key(String id, String reason) {
    }

    /**
     * A completed scan's log of skips.
     *
     * @param root    the host root it scanned, or {@code null} in {@link #NONE}
     * @param skips   the keys of its WARN-eligible skips, immutable, at most {@value Discovery#LISTED_SKIPS}
     * @param summary the text of its "more devices skipped than listed" line, or {@code null} when it had none
     */
    record Last(Path root, Set<Key> skips, String summary) {
        /** What a source instance that has not completed a scan (of this root) remembers. */
        static final Last NONE = new Last(null, Set.of(), null);

        Last {
            skips = Set.copyOf(skips);
            if (skips.size() > Discovery.LISTED_SKIPS) {
                throw new IllegalArgumentException("more than " + Discovery.LISTED_SKIPS + " skips: " + skips.size());
            }
        }
    }

    private volatile Last last = Last.NONE;

    /** What the last completed scan published, if it scanned {@code root}; else {@link Last#NONE}. */
    Last last(Path root) {
        Last known = last;
        return Objects.equals(known.root(), root) ? known : Last.NONE;
    }

    /** Replaces what is remembered with what a scan that has just completed logged. */
    void publish(Last completed) {
        last = completed;
    }
}
