package dev.vgpu.kubelet.api.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UnixDomainTransportTest {

    @TempDir
    Path tmp;

    @Test
    void aBindFailureSaysTheOperatingSystemsReason() throws IOException {
        // Binding in a directory that does not exist fails, whoever we are.
        Path socket = tmp.resolve("missing").resolve("kubevirt-X.sock");
        try (UnixDomainTransport transport = UnixDomainTransport.create("bind-test", 1, 1)) {
            assertThatThrownBy(() -> transport.serve(socket, List.of()))
                    .isInstanceOf(IOException.class)
                    .hasMessageStartingWith("cannot serve on " + socket + ": ")
                    .hasMessageContaining("No such file or directory");
        }
    }

    @Test
    void aPathOf107BytesIsServedAndOneOf108IsRefusedNamingTheLimit() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("d"));
        String prefix = dir + "/";
        Path longest = dir.resolve("a".repeat(107 - prefix.length()));
        Path tooLong = dir.resolve("b".repeat(108 - prefix.length()));
        Files.createFile(tooLong);
        try (UnixDomainTransport transport = UnixDomainTransport.create("bind-test", 1, 1)) {
            Server server = transport.serve(longest, List.of());
            try {
                assertThat(UnixDomainTransport.pathBytes(longest)).isEqualTo(107);
                assertThat(longest).exists();
            } finally {
                server.shutdownNow();
            }
            assertThatThrownBy(() -> transport.serve(tooLong, List.of()))
                    .isInstanceOf(IOException.class)
                    .hasMessage("cannot serve on " + tooLong + ": the path has 108 bytes, more than the 107 a unix "
                            + "socket path may have");
            assertThat(tooLong).as("nothing is deleted at a path that cannot be bound").isRegularFile();
        }
    }

    @Test
    void pathBytesCountsUtf8() {
        assertThat(UnixDomainTransport.pathBytes(Path.of("/tmp/é"))).isEqualTo(7);
    }
}
