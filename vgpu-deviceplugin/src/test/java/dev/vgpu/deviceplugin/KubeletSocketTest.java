package dev.vgpu.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kubelet's socket going away is one WARN, its return one INFO, however many looks fall in between. */
class KubeletSocketTest {

    @TempDir
    Path dir;

    @Test
    void aSocketThatIsGoneForManyLooksIsOneWarnAndItsReturnOneInfo() throws IOException {
        Path sock = dir.resolve("kubelet.sock");
        KubeletSocket memory = new KubeletSocket(sock, PluginObserver.NONE);

        String log = CapturedStderr.of(() -> {
            assertThat(memory.look()).as("no kubelet yet: nothing to miss").isEqualTo(KubeletSocket.NONE);
            write(sock, 1);
            assertThat(memory.look()).isEqualTo(1);
            delete(sock);
            for (int i = 0; i < 8; i++) {
                assertThat(memory.look()).isEqualTo(KubeletSocket.NONE);
            }
            write(sock, 2);
            assertThat(memory.look()).isEqualTo(2);
            assertThat(memory.look()).isEqualTo(2);
        });

        assertThat(log.lines().filter(line -> line.contains("WARN"))).singleElement().asString()
                .contains("The kubelet's socket " + sock + " is gone");
        assertThat(log.lines().filter(line -> line.endsWith(sock + " is back"))).singleElement().asString()
                .contains(" INFO ");
    }

    /**
     * A check's read that a newer look overtook (of the socket one restart or two before, or of none) is ignored, not
     * taken for another restart; a read that no look overtook is taken.
     */
    @Test
    void aReadOvertakenByNewerLooksIsIgnored() {
        java.util.concurrent.atomic.AtomicInteger restarts = new java.util.concurrent.atomic.AtomicInteger();
        KubeletSocket memory = new KubeletSocket(dir.resolve("kubelet.sock"), new PluginObserver() {
            @Override
            public void kubeletRestarted() {
                restarts.incrementAndGet();
            }
        });
        var first = java.util.Optional.of(new KubeletSocket.Identity("inode 1", FileTime.from(Instant.ofEpochSecond(1))));
        var second = java.util.Optional.of(new KubeletSocket.Identity("inode 2", FileTime.from(Instant.ofEpochSecond(2))));
        var third = java.util.Optional.of(new KubeletSocket.Identity("inode 3", FileTime.from(Instant.ofEpochSecond(3))));
        assertThat(memory.seen(first)).isEqualTo(1);
        long oneRestartAgo = memory.looks();
        assertThat(memory.seen(second)).isEqualTo(2);
        assertThat(memory.seenSince(first, oneRestartAgo)).as("overtaken by one look").isEqualTo(2);
        long checkBegan = memory.looks();
        assertThat(memory.seen(third)).isEqualTo(3);
        assertThat(memory.seenSince(first, checkBegan)).as("overtaken, two restarts old").isEqualTo(3);
        assertThat(memory.seenSince(second, checkBegan)).as("overtaken, one restart old").isEqualTo(3);
        assertThat(memory.seenSince(java.util.Optional.empty(), checkBegan)).as("overtaken, gone").isEqualTo(3);
        assertThat(memory.present()).isTrue();
        assertThat(restarts).hasValue(2);

        long nextCheck = memory.looks();
        assertThat(memory.seenSince(first, nextCheck)).as("not overtaken: another socket").isEqualTo(4);
        assertThat(restarts).hasValue(3);
    }

    private static void write(Path file, int second) {
        try {
            Files.writeString(file, "stands for a socket");
            Files.setLastModifiedTime(file, FileTime.from(Instant.ofEpochSecond(second)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void delete(Path file) {
        try {
            Files.delete(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
