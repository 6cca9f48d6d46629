package dev.vgpu.daemon.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ScanObserver;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.sysfs.PassthroughSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** /healthz fails after a number of failed discovery rounds in a row, saying why in words; one good round clears it. */
class FailedScansTest {

    @TempDir
    Path root;

    @Test
    void theLimitOfFailedRoundsInARowFailsLivenessAndAGoodRoundClearsIt() throws IOException {
        AtomicInteger heard = new AtomicInteger();
        FailedScans failed = new FailedScans(new ScanObserver() {
            @Override
            public void scanned(Duration took, Scanner.Result result) {
                heard.incrementAndGet();
            }
        }, 3);
        Scanner scanner = Scanner.of(root, List.of(new PassthroughSource()));

        for (int round = 1; round <= 3; round++) {
            assertThat(failed.problem()).as("after %d failed rounds", round - 1).isEmpty();
            failed.scanned(Duration.ZERO, scanner.run(Snapshot.empty()));
        }
        assertThat(failed.problem()).hasValueSatisfying(problem -> assertThat(problem)
                .startsWith("the last 3 discovery rounds failed (limit 3, --unhealthy-after-failed-scans); last:"
                        + " source passthrough: ")
                .contains("sys/bus/pci/devices is missing under the host root")
                .doesNotContain("Exception"));

        Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        failed.scanned(Duration.ZERO, scanner.run(Snapshot.empty()));
        assertThat(failed.problem()).isEmpty();
        assertThat(heard).as("every round reaches the metrics").hasValue(4);
    }

    @Test
    void zeroNeverFailsLivenessAndAThrowingRoundCounts() {
        FailedScans never = new FailedScans(ScanObserver.NONE, 0);
        FailedScans once = new FailedScans(ScanObserver.NONE, 1);
        for (FailedScans f : List.of(never, once)) {
            f.roundFailed(Duration.ZERO, new IllegalStateException("the sink refused"));
        }
        assertThat(never.problem()).isEmpty();
        assertThat(once.problem()).hasValueSatisfying(problem -> assertThat(problem)
                .endsWith("last: the round failed: an unexpected error (IllegalStateException: the sink refused)"));
    }
}
