package dev.vgpu.deviceplugin.transport;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        // A unix socket path longer than the kernel's 107 bytes cannot be bound, whoever we are.
        Path dir = Files.createDirectories(tmp.resolve("d".repeat(120)));
        try (UnixDomainTransport transport = UnixDomainTransport.create("bind-test", 1, 1)) {
            assertThatThrownBy(() -> transport.serve(dir.resolve("kubevirt-X.sock"), List.of()))
                    .isInstanceOf(IOException.class)
                    .hasMessageStartingWith("cannot serve on " + dir.resolve("kubevirt-X.sock") + ": ")
                    .hasMessageContaining("File name too long");
        }
    }
}
