package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.VF;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The prepared-claims checkpoint as an attacker with write access to the state directory leaves it
 * (docs/RELIABILITY.md, "DRA mode"): a FIFO, a huge file, entries naming paths outside the daemon's own directories.
 * The plugin starts, says once what it found, and never deletes what is not its own.
 */
@Tag("reliability")
class HostileCheckpointTest {

    private static final String A = "aaaaaaaa-0000-4000-8000-00000000000a";

    @TempDir
    Path tmp;
    DraHarness h;
    private final ExecutorService unblocker = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        unblocker.shutdownNow();
        if (h != null) {
            h.close();
        }
    }

    @Test
    void aFifoAtTheCheckpointIsOneWarnNamingItAndTheStartDoesNotHang() throws Exception {
        h = new DraHarness(tmp);
        h.stop();
        Path checkpoint = h.checkpoint();
        Files.deleteIfExists(checkpoint);
        Process mkfifo = new ProcessBuilder("mkfifo", checkpoint.toString()).inheritIO().start();
        assertThat(mkfifo.waitFor()).isZero();

        String log;
        try {
            log = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> CapturedStderr.of(h::start));
        } finally {
            // Frees a start that hangs in reading the FIFO (the old behaviour), so the test ends either way: opened
            // read-write, a FIFO never blocks the opener; closing it ends the hung reader's read.
            unblocker.submit(() -> {
                try (var writer = Files.newByteChannel(checkpoint, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    writer.isOpen();
                }
                return null;
            }).get(10, TimeUnit.SECONDS);
        }

        assertThat(log).contains("WARN").contains(checkpoint.toString()).contains("not a regular file");
        Claim claim = h.allocate("vf", A, "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
    }

    @Test
    void aCheckpointOfTwoHundredMebibytesIsOneWarnNamingItsSizeAndTreatedAsEmpty() throws Exception {
        h = new DraHarness(tmp);
        h.stop();
        try (RandomAccessFile file = new RandomAccessFile(h.checkpoint().toFile(), "rw")) {
            file.setLength(200L << 20);
        }

        String log = CapturedStderr.of(h::start);

        assertThat(log).contains("WARN", h.checkpoint().toString(), "209715200 bytes", "more than the");
        Claim claim = h.allocate("vf", A, "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
        assertThat(h.unprepare(claim)).isEmpty();
    }

    @Test
    void aCheckpointEntryNamingAPathOutsideTheDaemonsDirectoriesIsNeverDeleted() throws IOException {
        h = new DraHarness(tmp);
        h.stop();
        Path precious = Files.createDirectories(tmp.resolve("precious"));
        Files.writeString(precious.resolve("data"), "keep me");
        Files.writeString(h.checkpoint(), "vgpu-dra-checkpoint\t1\n"
                + "claim\tvms\tvf\t" + A + "\n"
                + "device\tnode-a\t" + VF + "\tgpu\tgpu.vgpu.dev/claim=" + A + "-" + VF + "\n"
                + "file\t" + precious + "\n"
                + "file\t" + h.cdiDir().resolve("../precious/data").normalize() + "\n"
                + "end\n");

        String log = CapturedStderr.of(h::start);
        String error = h.unprepare(TestKubelet.claim("vms", "vf", A));

        assertThat(error).isEmpty();
        assertThat(precious.resolve("data")).hasContent("keep me");
        assertThat(log).contains("WARN", h.checkpoint().toString(), precious.toString());
    }
}
