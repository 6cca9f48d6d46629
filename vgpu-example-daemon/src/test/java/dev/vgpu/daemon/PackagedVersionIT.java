package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.scan.PciIdsDatabase;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --version} of the packaged jar reads the project version from the jar's manifest. */
class PackagedVersionIT {

    @Test
    void thePackagedJarSaysItsProjectVersion(@TempDir Path tmp) throws Exception {
        String version = System.getProperty("vgpu.version");
        assertThat(version).as("vgpu.version is set by the build").isNotBlank();
        try (DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("out.log"),
                "--version")) {
            assertThat(daemon.awaitExit(60)).isZero();
            assertThat(daemon.output()).contains("vgpu-daemon " + version + "\n", "pci.ids: bundled NVIDIA section "
                    + "version " + PciIdsDatabase.bundledVersion()).doesNotContain("development build");
        }
    }
}
