package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Snapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * While a scan runs on a thread, the native reader keeps the descriptor of each directory that thread lists and
 * makes the thread's calls below it relative to that descriptor (docs/BUILD.md, "Kept directories"). The answers
 * are the same as by whole paths, failures and their messages included; the descriptors are closed when the
 * scan ends, however it ends, and at most four listed directories and one device directory (a directory asked twice
 * in a row) are open at once.
 *
 * <p>Run on both readers, as {@link AttributeFilesTest}: the NIO reader keeps nothing, so there the answers are
 * trivially the same and no descriptor is ever left open; where the two differ by design, each case says what each
 * reader answers.
 */
@Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KeptDirectoriesTest {

    @TempDir
    Path root;

    /** A bus-like directory: entries that are links to device directories, with attributes, links and a FIFO. */
    private Path bus() throws Exception {
        Path devices = Files.createDirectories(root.resolve("devices"));
        Path bus = Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        for (String bdf : List.of("0000:1b:00.0", "0000:1b:00.4")) {
            Path device = Files.createDirectories(devices.resolve(bdf));
            Files.writeString(device.resolve("vendor"), "0x10de\n");
            Files.createDirectories(device.resolve("nvidia"));
            Files.writeString(device.resolve("nvidia/current_vgpu_type"), bdf.endsWith("4") ? "1428\n" : "0\n");
            Files.createSymbolicLink(device.resolve("driver"), Path.of("../../drivers/nvidia"));
            Files.createDirectories(device.resolve("vfio-dev/vfio3"));
            Files.createSymbolicLink(bus.resolve(bdf), bus.relativize(device));
        }
        Files.createDirectories(root.resolve("drivers/nvidia"));
        Process mkfifo = new ProcessBuilder("mkfifo", devices.resolve("0000:1b:00.4/numa_node").toString()).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        return bus;
    }

    /** Every kind of call a source makes below the bus, each answer (or failure, with its message) in words. */
    private static List<String> answers(Path bus) {
        Path vf = bus.resolve("0000:1b:00.4");
        List<String> answers = new ArrayList<>();
        answers.add(answer(() -> AttributeFiles.readStripped(vf, "vendor", ScanScope.none())));
        answers.add(answer(() -> AttributeFiles.read(vf, "nvidia/current_vgpu_type", ScanScope.none())));
        answers.add(answer(() -> AttributeFiles.read(vf.resolve("nvidia/current_vgpu_type"))));
        answers.add(answer(() -> AttributeFiles.linkName(vf, "driver")));
        answers.add(answer(() -> AttributeFiles.linkName(bus, "0000:1b:00.0", "driver")));
        answers.add(answer(() -> AttributeFiles.linkName(bus, "0000:1b:00.9", "driver")));
        answers.add(answer(() -> AttributeFiles.list(vf, "vfio-dev")));
        answers.add(answer(() -> AttributeFiles.isDirectory(vf, "driver")));
        answers.add(answer(() -> AttributeFiles.isDirectory(bus, "0000:1b:00.9")));
        answers.add(answer(() -> AttributeFiles.exists(vf, "physfn", LinkOption.NOFOLLOW_LINKS)));
        answers.add(answer(() -> AttributeFiles.read(vf, "nvidia/gpu_instance_id", ScanScope.none())));
        answers.add(answer(() -> AttributeFiles.read(vf, "numa_node", ScanScope.none())));
        answers.add(answer(() -> AttributeFiles.linkName(vf, "vendor")));
        return answers;
    }

    private interface Call {
        Object call() throws IOException;
    }

    private static String answer(Call call) {
        try {
            return "= " + call.call();
        } catch (NoSuchFileException e) {
            return "NoSuchFileException " + e.getFile(); // the native reader's is a stackless subclass
        } catch (IOException e) {
            return e.getClass().getSimpleName() + " " + e.getMessage();
        }
    }

    /**
     * The process's open descriptors of files under this test's directory: what each {@code /proc/self/fd} entry
     * names (a descriptor that other code of the JVM opens or closes meanwhile does not count).
     */
    private long openDescriptors() throws IOException {
        String under = root.toRealPath() + "/";
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return (Files.readSymbolicLink(fd) + "/").startsWith(under);
                } catch (IOException e) {
                    return false; // closed since the listing
                }
            }).count();
        }
    }

    @Test
    void everyCallBelowAListedDirectoryAnswersAsByItsWholePath() throws Exception {
        Path bus = bus();
        List<String> byWholePaths = answers(bus);

        AttributeFiles.scanStarted();
        List<String> inAScan;
        try {
            assertThat(AttributeFiles.list(bus)).containsExactlyInAnyOrder("0000:1b:00.0", "0000:1b:00.4");
            inAScan = answers(bus);
        } finally {
            AttributeFiles.scanEnded();
        }

        assertThat(inAScan).isEqualTo(byWholePaths);
        assertThat(byWholePaths).contains("= 0x10de", "= 1428\n", "= nvidia", "= [vfio3]",
                "NoSuchFileException " + bus.resolve("0000:1b:00.4/nvidia/gpu_instance_id"),
                "NoSuchFileException " + bus.resolve("0000:1b:00.9/driver"),
                "NotRegularFileException " + bus.resolve("0000:1b:00.4/numa_node") + ": is a FIFO, not a regular file");
        assertThat(byWholePaths.get(12)).startsWith("NotLinkException " + bus.resolve("0000:1b:00.4/vendor"));
    }

    @Test
    void aListedDirectoryStaysTheOneListedUntilTheScanEndsWhereTheNativeReaderKeepsIt() throws Exception {
        Path bus = bus();
        Path moved = root.resolve("sys/bus/pci/devices.old");

        AttributeFiles.scanStarted();
        String inTheScan;
        try {
            AttributeFiles.list(bus);
            Files.move(bus, moved);
            Files.createDirectories(bus.resolve("0000:1b:00.4"));
            Files.writeString(bus.resolve("0000:1b:00.4/vendor"), "0x8086\n");
            inTheScan = AttributeFiles.readStripped(bus.resolve("0000:1b:00.4"), "vendor", ScanScope.none());
        } finally {
            AttributeFiles.scanEnded();
        }

        // natively the call went relative to the listed directory's descriptor; NIO keeps none and reads the new one
        assertThat(inTheScan).isEqualTo(AttributeFiles.readsNatively(bus) ? "0x10de" : "0x8086");
        assertThat(AttributeFiles.readStripped(bus.resolve("0000:1b:00.4"), "vendor", ScanScope.none()))
                .isEqualTo("0x8086");
    }

    @Test
    void atMostFourDescriptorsAreKeptAndTheOutermostScansEndClosesThem() throws Exception {
        List<Path> listed = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            listed.add(Files.createDirectories(root.resolve("dir" + i + "/child")).getParent());
        }
        long before = openDescriptors();

        AttributeFiles.scanStarted();
        AttributeFiles.scanStarted(); // a scan within a scan on one thread
        long keptWhileScanning;
        long keptAfterTheInnerEnd;
        try {
            for (Path dir : listed) {
                assertThat(AttributeFiles.list(dir)).containsExactly("child");
                assertThat(AttributeFiles.isDirectory(dir, "child")).isTrue();
            }
            keptWhileScanning = openDescriptors() - before;
        } finally {
            AttributeFiles.scanEnded();
            keptAfterTheInnerEnd = openDescriptors() - before;
            AttributeFiles.scanEnded();
        }

        assertThat(openDescriptors()).isEqualTo(before);
        assertThat(keptWhileScanning).isBetween(0L, 4L);
        assertThat(keptAfterTheInnerEnd).isEqualTo(keptWhileScanning);
        if (AttributeFiles.readsNatively(root)) {
            assertThat(keptWhileScanning).isEqualTo(4);
        }
        AttributeFiles.scanEnded(); // one end too many is harmless
        assertThat(openDescriptors()).isEqualTo(before);
    }

    @Test
    void aDirectoryAskedTwiceInARowIsOpenedOnceAndOneSuchDirectoryIsKeptAtATime() throws Exception {
        Path bus = bus();
        Path pf = bus.resolve("0000:1b:00.0");
        Path vf = bus.resolve("0000:1b:00.4");
        long before = openDescriptors();

        AttributeFiles.scanStarted();
        long afterTheListing;
        long afterOneDevice;
        long afterTwoDevices;
        List<String> read = new ArrayList<>();
        try {
            AttributeFiles.list(bus);
            afterTheListing = openDescriptors() - before;
            read.add(AttributeFiles.readStripped(vf, "vendor", ScanScope.none()));
            read.add(AttributeFiles.readStripped(vf, "nvidia/current_vgpu_type", ScanScope.none()));
            read.add(AttributeFiles.linkName(vf, "driver"));
            afterOneDevice = openDescriptors() - before;
            read.add(AttributeFiles.readStripped(pf, "vendor", ScanScope.none()));
            read.add(AttributeFiles.readStripped(pf, "nvidia/current_vgpu_type", ScanScope.none()));
            afterTwoDevices = openDescriptors() - before;
        } finally {
            AttributeFiles.scanEnded();
        }

        assertThat(read).containsExactly("0x10de", "1428", "nvidia", "0x10de", "0");
        assertThat(openDescriptors()).isEqualTo(before);
        if (AttributeFiles.readsNatively(bus)) {
            // the listing's descriptor, then the device's beside it; the second device's replaces the first's
            assertThat(List.of(afterTheListing, afterOneDevice, afterTwoDevices)).containsExactly(1L, 2L, 2L);
        } else {
            assertThat(List.of(afterTheListing, afterOneDevice, afterTwoDevices)).containsOnly(0L);
        }
    }

    @Test
    void aScannerClosesWhatItsSourcesListedEvenWhenOneFails() throws Exception {
        Path bus = bus();
        DeviceSource lister = new DeviceSource() {
            @Override
            public String name() {
                return "lister";
            }

            @Override
            public Discovery discover(Host host) throws IOException {
                AttributeFiles.list(bus);
                Path vf = bus.resolve("0000:1b:00.4");
                AttributeFiles.readStripped(vf, "vendor", host.scanScope());
                AttributeFiles.readStripped(vf, "nvidia/current_vgpu_type", host.scanScope()); // kept: asked twice
                throw new IOException("listed, then failed");
            }
        };
        Scanner scanner = Scanner.of(root, List.of(lister));
        long before = openDescriptors();

        Scanner.Result result = scanner.run(Snapshot.empty());

        assertThat(result.failures()).containsEntry("lister", "listed, then failed");
        assertThat(openDescriptors()).isEqualTo(before);
        // the same thread's reads after the scan go by whole paths: nothing was left kept
        Files.delete(bus.resolve("0000:1b:00.4"));
        assertThatThrownBy(() -> AttributeFiles.readStripped(bus.resolve("0000:1b:00.4"), "vendor",
                ScanScope.none())).isInstanceOf(NoSuchFileException.class);
    }
}
