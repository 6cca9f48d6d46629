package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A failing source is one WARN when it starts failing and one INFO when it answers again, in words. */
class ScannerFailureLogsTest {

    @TempDir
    Path root;

    /** Throws what the test sets, else finds nothing. */
    static final class FlakySource implements DeviceSource {
        final AtomicReference<Exception> failure = new AtomicReference<>();

        @Override
        public String name() {
            return "flaky";
        }

        @Override
        public Discovery discover(Host host) throws IOException {
            Exception e = failure.get();
            if (e instanceof IOException io) {
                throw io;
            }
            if (e != null) {
                throw (RuntimeException) e;
            }
            return Discovery.builder().build();
        }
    }

    @Test
    void aPersistentFailureIsOneWarnAndTheRecoveryOneInfo() {
        FlakySource source = new FlakySource();
        Scanner scanner = new Scanner(root, PciIds.empty(), VgpuTypeResolver.none(), List.of(source));

        String log = CapturedStderr.of(() -> {
            source.failure.set(new NoSuchFileException("/tmp/sys/bus/pci/devices"));
            for (int i = 0; i < 5; i++) {
                assertThat(scanner.run(Snapshot.empty()).failures())
                        .containsEntry("flaky", "/tmp/sys/bus/pci/devices is missing");
            }
            source.failure.set(null);
            scanner.run(Snapshot.empty());
            scanner.run(Snapshot.empty());
        });

        assertThat(log.lines().filter(line -> line.contains("WARN"))).singleElement().asString()
                .contains("source flaky is failing: /tmp/sys/bus/pci/devices is missing");
        assertThat(log.lines().filter(line -> line.contains("INFO"))).singleElement().asString()
                .contains("source flaky answers again after 5 failed scans in a row");
        assertThat(log).doesNotContain("ERROR").doesNotContain("Exception");
    }

    @Test
    void anotherReasonIsAnotherWarn() {
        FlakySource source = new FlakySource();
        Scanner scanner = new Scanner(root, PciIds.empty(), VgpuTypeResolver.none(), List.of(source));

        String log = CapturedStderr.of(() -> {
            source.failure.set(new NoSuchFileException("/sys/bus/pci/devices"));
            scanner.run(Snapshot.empty());
            source.failure.set(new AccessDeniedException("/sys/bus/pci/devices"));
            scanner.run(Snapshot.empty());
            scanner.run(Snapshot.empty());
        });

        assertThat(log.lines().filter(line -> line.contains("WARN")).toList()).hasSize(2)
                .last().asString().contains("/sys/bus/pci/devices: permission denied");
    }

    @Test
    void reasonsAreWordsNotClassNames() {
        assertThat(Scanner.inWords(new NoSuchFileException("/x/sys", null,
                "sys is missing under the host root /x (is the host's /sys mounted there?)")))
                .isEqualTo("/x/sys: sys is missing under the host root /x (is the host's /sys mounted there?)");
        assertThat(Scanner.inWords(new IOException("cannot list /sys/bus/pci/devices")))
                .isEqualTo("cannot list /sys/bus/pci/devices");
        assertThat(Scanner.inWords(new IllegalStateException("boom")))
                .isEqualTo("an unexpected error (IllegalStateException: boom)");
    }
}
