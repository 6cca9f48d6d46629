package dev.vgpu.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

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
