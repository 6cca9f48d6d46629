package dev.vgpu.attach.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one VFIO cdev lookup, on the default file system (java.io listing) and on jimfs (NIO listing). */
class HostVfioTest {

    /** Only its reader is used: the lookup takes the function's directory as given. */
    private static final Host HOST = Host.of(Path.of("/"));

    /** A kernel's name among names no kernel makes; plain files count by name alone. */
    private static final List<String> HOSTILE = List.of("vfio 1", "vfio-x", "vfio", "vfio12", "vfio3", "vfioA",
            "vfio12345678901", "iommu", "vfio\n0");

    @Test
    void onTheDefaultFileSystemOnlyKernelNamesCountLowestNumberFirst(@TempDir Path tmp) throws IOException {
        assertThat(HostVfio.vfioCdev(HOST, function(tmp))).contains("vfio3");
    }

    @Test
    void onJimfsTheSameRuleHolds() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            assertThat(HostVfio.vfioCdev(HOST, function(fs.getPath("/host")))).contains("vfio3");
        }
    }

    @Test
    void noVfioDevOrOnlyForeignNamesIsNoCdev(@TempDir Path tmp) throws IOException {
        assertThat(HostVfio.vfioCdev(HOST, tmp)).isEmpty();
        Files.createDirectories(tmp.resolve("vfio-dev/vfio 1"));
        assertThat(HostVfio.vfioCdev(HOST, tmp)).isEqualTo(Optional.empty());
    }

    private static Path function(Path dir) throws IOException {
        Path vfioDev = dir.resolve("vfio-dev");
        Files.createDirectories(vfioDev);
        for (String name : HOSTILE) {
            if (name.equals("vfio3")) {
                Files.writeString(vfioDev.resolve(name), "");
            } else {
                Files.createDirectory(vfioDev.resolve(name));
            }
        }
        return dir;
    }
}
