package dev.vgpu.hostfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.hostfiles.testsupport.OpenDescriptors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * While a scan round is open ({@link HostFiles#openRound}), the native reader keeps the descriptor of each directory
 * its thread lists with it and makes that thread's calls below it relative to that descriptor (docs/BUILD.md, "Kept
 * directories"). The answers are the same as by whole paths, failures and their messages included; the descriptors
 * are closed when the round closes, however it ends, and at most four listed directories and one device directory (a
 * directory asked twice in a row) are open at once per round.
 *
 * <p>Run on both readers, as {@link HostFilesTest}: the NIO reader keeps nothing, so there the answers are
 * trivially the same and no descriptor is ever left open; where the two differ by design, each case says what each
 * reader answers.
 */
@Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KeptDirectoriesTest {

    private static final HostFiles FILES = HostFiles.load();

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
    private static List<String> answers(Path bus, ScanScope scope) {
        Path vf = bus.resolve("0000:1b:00.4");
        List<String> answers = new ArrayList<>();
        answers.add(answer(() -> FILES.readStripped(vf, "vendor", scope)));
        answers.add(answer(() -> FILES.read(vf, "nvidia/current_vgpu_type", scope)));
        answers.add(answer(() -> FILES.read(vf.resolve("nvidia/current_vgpu_type"))));
        answers.add(answer(() -> FILES.linkName(vf, "driver", scope)));
        answers.add(answer(() -> FILES.linkName(bus, "0000:1b:00.0", "driver", scope)));
        answers.add(answer(() -> FILES.linkName(bus, "0000:1b:00.9", "driver", scope)));
        answers.add(answer(() -> FILES.list(vf, "vfio-dev", scope)));
        answers.add(answer(() -> FILES.isDirectory(vf, "driver", scope)));
        answers.add(answer(() -> FILES.isDirectory(bus, "0000:1b:00.9", scope)));
        answers.add(answer(() -> FILES.exists(vf, "physfn", scope, LinkOption.NOFOLLOW_LINKS)));
        answers.add(answer(() -> FILES.read(vf, "nvidia/gpu_instance_id", scope)));
        answers.add(answer(() -> FILES.read(vf, "numa_node", scope)));
        answers.add(answer(() -> FILES.linkName(vf, "vendor", scope)));
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

    /** The process's open descriptors of files under this test's directory. */
    private long openDescriptors() throws IOException {
        return OpenDescriptors.under(root);
    }

    @Test
    void everyCallBelowAListedDirectoryAnswersAsByItsWholePath() throws Exception {
        Path bus = bus();
        List<String> byWholePaths = answers(bus, ScanScope.none());

        List<String> inARound;
        try (ScanRound scope = FILES.openRound(16)) {
            assertThat(FILES.list(bus, scope)).containsExactlyInAnyOrder("0000:1b:00.0", "0000:1b:00.4");
            inARound = answers(bus, scope);
        }

        assertThat(inARound).isEqualTo(byWholePaths);
        assertThat(byWholePaths).contains("= 0x10de", "= 1428\n", "= nvidia", "= [vfio3]",
                "NoSuchFileException " + bus.resolve("0000:1b:00.4/nvidia/gpu_instance_id"),
                "NoSuchFileException " + bus.resolve("0000:1b:00.9/driver"),
                "NotRegularFileException " + bus.resolve("0000:1b:00.4/numa_node") + ": is a FIFO, not a regular file");
        assertThat(byWholePaths.get(12)).startsWith("NotLinkException " + bus.resolve("0000:1b:00.4/vendor"));
    }

    @Test
    void aListedDirectoryStaysTheOneListedUntilTheRoundEndsWhereTheNativeReaderKeepsIt() throws Exception {
        Path bus = bus();
        Path moved = root.resolve("sys/bus/pci/devices.old");

        String inTheRound;
        String besideTheRound;
        try (ScanRound scope = FILES.openRound(16)) {
            FILES.list(bus, scope);
            Files.move(bus, moved);
            Files.createDirectories(bus.resolve("0000:1b:00.4"));
            Files.writeString(bus.resolve("0000:1b:00.4/vendor"), "0x8086\n");
            inTheRound = FILES.readStripped(bus.resolve("0000:1b:00.4"), "vendor", scope);
            besideTheRound = FILES.readStripped(bus.resolve("0000:1b:00.4"), "vendor", ScanScope.none());
        }

        // natively the call went relative to the listed directory's descriptor; NIO keeps none and reads the new one
        assertThat(inTheRound).isEqualTo(FILES.readsNatively(bus) ? "0x10de" : "0x8086");
        // a read of the same thread without the round's scope goes by its whole path
        assertThat(besideTheRound).isEqualTo("0x8086");
        assertThat(FILES.readStripped(bus.resolve("0000:1b:00.4"), "vendor", ScanScope.none())).isEqualTo("0x8086");
    }

    @Test
    void atMostFourDescriptorsAreKeptPerRoundAndEachRoundsCloseClosesItsOwn() throws Exception {
        List<Path> listed = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            listed.add(Files.createDirectories(root.resolve("dir" + i + "/child")).getParent());
        }
        long before = openDescriptors();

        long keptByTheOuterRound;
        long keptByBoth;
        long keptAfterTheInnerClosed;
        ScanRound outer = FILES.openRound(16);
        try {
            for (Path dir : listed) {
                assertThat(FILES.list(dir, outer)).containsExactly("child");
                assertThat(FILES.isDirectory(dir, "child", outer)).isTrue();
            }
            keptByTheOuterRound = openDescriptors() - before;
            try (ScanRound inner = FILES.openRound(16)) { // a round within a round on one thread
                for (Path dir : listed.subList(0, 2)) {
                    assertThat(FILES.list(dir, inner)).containsExactly("child");
                }
                keptByBoth = openDescriptors() - before;
            }
            keptAfterTheInnerClosed = openDescriptors() - before;
        } finally {
            outer.close();
        }

        assertThat(openDescriptors()).isEqualTo(before);
        assertThat(keptByTheOuterRound).isBetween(0L, 4L);
        assertThat(keptAfterTheInnerClosed).isEqualTo(keptByTheOuterRound);
        if (FILES.readsNatively(root)) {
            assertThat(keptByTheOuterRound).isEqualTo(4);
            assertThat(keptByBoth).isEqualTo(6);
        } else {
            assertThat(keptByBoth).isZero();
        }
        outer.close(); // one close too many is harmless
        assertThat(openDescriptors()).isEqualTo(before);
    }

    @Test
    void aDirectoryAskedTwiceInARowIsOpenedOnceAndOneSuchDirectoryIsKeptAtATime() throws Exception {
        Path bus = bus();
        Path pf = bus.resolve("0000:1b:00.0");
        Path vf = bus.resolve("0000:1b:00.4");
        long before = openDescriptors();

        long afterTheListing;
        long afterOneDevice;
        long afterTwoDevices;
        List<String> read = new ArrayList<>();
        try (ScanRound scope = FILES.openRound(16)) {
            FILES.list(bus, scope);
            afterTheListing = openDescriptors() - before;
            read.add(FILES.readStripped(vf, "vendor", scope));
            read.add(FILES.readStripped(vf, "nvidia/current_vgpu_type", scope));
            read.add(FILES.linkName(vf, "driver", scope));
            afterOneDevice = openDescriptors() - before;
            read.add(FILES.readStripped(pf, "vendor", scope));
            read.add(FILES.readStripped(pf, "nvidia/current_vgpu_type", scope));
            afterTwoDevices = openDescriptors() - before;
        }

        assertThat(read).containsExactly("0x10de", "1428", "nvidia", "0x10de", "0");
        assertThat(openDescriptors()).isEqualTo(before);
        if (FILES.readsNatively(bus)) {
            // the listing's descriptor, then the device's beside it; the second device's replaces the first's
            assertThat(List.of(afterTheListing, afterOneDevice, afterTwoDevices)).containsExactly(1L, 2L, 2L);
        } else {
            assertThat(List.of(afterTheListing, afterOneDevice, afterTwoDevices)).containsOnly(0L);
        }
    }

    @Test
    void aRoundClosesWhatItsThreadListedEvenWhenTheScanFailsAndOtherThreadsKeepNothing() throws Exception {
        Path bus = bus();
        Path vf = bus.resolve("0000:1b:00.4");
        long before = openDescriptors();
        long keptByAnotherThread = -1;

        ScanRound scope = FILES.openRound(16);
        try (scope) {
            FILES.list(bus, scope);
            FILES.readStripped(vf, "vendor", scope);
            FILES.readStripped(vf, "nvidia/current_vgpu_type", scope); // kept: asked twice
            java.util.concurrent.CompletableFuture<Long> other = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            long at = openDescriptors();
                            FILES.list(bus, scope);
                            FILES.readStripped(bus.resolve("0000:1b:00.0"), "vendor", scope);
                            FILES.readStripped(bus.resolve("0000:1b:00.0"), "nvidia/current_vgpu_type", scope);
                            return openDescriptors() - at;
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
            keptByAnotherThread = other.get(20, TimeUnit.SECONDS);
            throw new IOException("listed, then failed");
        } catch (IOException e) {
            assertThat(e).hasMessage("listed, then failed");
        }

        assertThat(keptByAnotherThread).as("another thread reads by whole paths").isZero();
        assertThat(openDescriptors()).isEqualTo(before);
        // the same thread's reads after the round go by whole paths: nothing was left kept
        Files.delete(bus.resolve("0000:1b:00.4"));
        assertThatThrownBy(() -> FILES.readStripped(bus.resolve("0000:1b:00.4"), "vendor", scope))
                .isInstanceOf(NoSuchFileException.class);
        assertThatCode(scope::close).as("closed again: nothing happens").doesNotThrowAnyException();
    }

    @Test
    void onlyTheThreadThatOpenedARoundClosesIt() throws Exception {
        ScanRound scope = FILES.openRound(16);
        try {
            java.util.concurrent.CompletableFuture<Void> other = java.util.concurrent.CompletableFuture.runAsync(
                    scope::close);
            assertThatThrownBy(() -> other.get(20, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed by the thread that opened it");
        } finally {
            scope.close();
        }
    }
}
