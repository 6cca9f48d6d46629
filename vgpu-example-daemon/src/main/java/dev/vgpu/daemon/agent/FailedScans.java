package dev.vgpu.daemon.agent;

import dev.vgpu.core.ScanObserver;
import dev.vgpu.core.spi.Scanner;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Counts discovery rounds that failed in a row (a source failed, or the round threw) for {@code /healthz}, and passes
 * every round on to the next observer (the metrics). A round in which every source answered resets the count.
 *
 * <p>Threads: written on the rescan thread after each round, read by the ops server's thread; one immutable
 * {@link Streak} behind one {@code volatile}.
 */
final class FailedScans implements ScanObserver {

    /** The default of {@code --unhealthy-after-failed-scans}. */
    static final int DEFAULT_LIMIT = 3;

    private record Streak(int rounds, String why) {
    }

    private final ScanObserver next;
    private final int limit;
    private volatile Streak streak = new Streak(0, "");

    /**
     * @param next  hears every round too
     * @param limit this many failed rounds in a row make the daemon not live; 0 = never
     */
    FailedScans(ScanObserver next, int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("the limit of failed scans is negative: " + limit);
        }
        this.next = Objects.requireNonNull(next, "next");
        this.limit = limit;
    }

    @Override
    public void scanned(Duration took, Scanner.Result result) {
        Map<String, String> failures = result.failures();
        streak = failures.isEmpty() ? new Streak(0, "") : new Streak(streak.rounds() + 1, failures.entrySet().stream()
                .map(e -> "source " + e.getKey() + ": " + e.getValue()).collect(Collectors.joining("; ")));
        next.scanned(took, result);
    }

    @Override
    public void roundFailed(Duration took, Throwable error) {
        streak = new Streak(streak.rounds() + 1, "the round failed: " + Scanner.inWords(error));
        next.roundFailed(took, error);
    }

    /** The liveness problem, when the last {@code limit} rounds all failed. */
    Optional<String> problem() {
        Streak now = streak;
        if (limit == 0 || now.rounds() < limit) {
            return Optional.empty();
        }
        return Optional.of("the last " + now.rounds() + " discovery rounds failed (limit "
                + limit + ", --unhealthy-after-failed-scans); last: " + now.why());
    }
}
