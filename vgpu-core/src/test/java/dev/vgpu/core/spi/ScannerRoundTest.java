package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Snapshot;
import dev.vgpu.hostfiles.testsupport.OpenDescriptors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each scan is one round of the host's reader ({@code HostFiles.openRound}), held by the scanning thread and closed
 * when the scan ends, however it ends: what the sources listed is not left open (docs/BUILD.md, "Kept directories").
 * With the native reader (Java 22 and later, the reader's jar) descriptors are kept during the scan; with NIO none
 * ever is, and the counts are trivially equal.
 */
class ScannerRoundTest {

    @TempDir
    Path root;

    /** The process's open descriptors of files under this test's directory. */
    private long openDescriptors() throws IOException {
        return OpenDescriptors.under(root);
    }

    @Test
    void aScannerClosesWhatItsSourcesListedEvenWhenOneFails() throws Exception {
        Path bus = Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        Path vf = Files.createDirectories(bus.resolve("0000:1b:00.4/nvidia"));
        Files.writeString(vf.resolve("current_vgpu_type"), "1428\n");
        Files.writeString(bus.resolve("0000:1b:00.4/vendor"), "0x10de\n");
        long[] duringTheScan = {-1};
        DeviceSource lister = new DeviceSource() {
            @Override
            public String name() {
                return "lister";
            }

            @Override
            public Discovery discover(Host host) throws IOException {
                host.files().list(bus, host.scanScope());
                Path function = bus.resolve("0000:1b:00.4");
                host.files().readStripped(function, "vendor", host.scanScope());
                host.files().readStripped(function, "nvidia/current_vgpu_type", host.scanScope()); // asked twice
                duringTheScan[0] = openDescriptors();
                throw new IOException("listed, then failed");
            }
        };
        Host host = Host.of(root);
        Scanner scanner = new Scanner(host, List.of(lister));
        long before = openDescriptors();

        Scanner.Result result = scanner.run(Snapshot.empty());

        assertThat(result.failures()).containsEntry("lister", "listed, then failed");
        assertThat(duringTheScan[0] - before).isEqualTo(host.files().readsNatively(bus) ? 2 : 0);
        assertThat(openDescriptors()).isEqualTo(before);
        // the same thread's reads after the scan go by whole paths: nothing was left kept
        Files.delete(bus.resolve("0000:1b:00.4/vendor"));
        assertThatThrownBy(() -> host.files().readStripped(bus.resolve("0000:1b:00.4"), "vendor",
                host.scanScope())).isInstanceOf(NoSuchFileException.class);
    }
}
