package dev.vgpu.hostfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one bounded attribute reader: regular files only, at most 64 KiB, loops and dangling links as errors; link
 * names and directory listings. FIFO cases carry a {@link Timeout} as a hang guard (opening a FIFO blocks until a
 * writer comes).
 *
 * <p>One contract for both readers: on Java 17, and from {@code target/classes} on any Java, this runs against the
 * java.io/NIO reader; on Java 22 and later the build runs it a second time against the packaged multi-release jar,
 * whose native reader then answers ({@link ReaderInUseTest} checks which one ran; docs/BUILD.md).
 */
@Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostFilesTest {

    /** The reader under contract: the best this runtime offers (native from the jar on Java 22 and later). */
    static final HostFiles FILES = HostFiles.load();

    @TempDir
    Path dir;

    @Test
    void readsASmallFileAsUtf8WithReplacementForGarbage() throws IOException {
        Files.write(dir.resolve("name"), new byte[] {'G', 'R', 'I', 'D', (byte) 0xff, '\n'});

        assertThat(FILES.read(dir.resolve("name"))).isEqualTo("GRID\ufffd\n");
    }

    @Test
    void readsExactlyTheLimitAndRefusesOneByteMore() throws IOException {
        Files.writeString(dir.resolve("full"), "1".repeat(HostFiles.MAX_BYTES));
        Files.writeString(dir.resolve("over"), "1".repeat(HostFiles.MAX_BYTES + 1));

        assertThat(FILES.read(dir.resolve("full"))).hasSize(HostFiles.MAX_BYTES);
        assertThatThrownBy(() -> FILES.read(dir.resolve("over"))).isInstanceOf(IOException.class)
                .hasMessage("over is larger than 65536 bytes");
    }

    @Test
    void aFifoIsRefusedWithoutOpeningIt() throws Exception {
        Path fifo = dir.resolve("current_vgpu_type");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        Files.createSymbolicLink(dir.resolve("link"), fifo.getFileName());

        assertThatThrownBy(() -> FILES.read(fifo)).isInstanceOf(NotRegularFileException.class)
                .hasMessageContaining("current_vgpu_type").hasMessageEndingWith("is a FIFO, not a regular file");
        assertThatThrownBy(() -> FILES.read(dir.resolve("link")))
                .isInstanceOf(NotRegularFileException.class).hasMessageContaining("FIFO");
    }

    @Test
    void aLinkToADeviceNodeIsRefused() throws IOException {
        Files.createSymbolicLink(dir.resolve("vendor"), Path.of("/dev/zero"));

        assertThatThrownBy(() -> FILES.read(dir.resolve("vendor")))
                .isInstanceOf(NotRegularFileException.class)
                .hasMessageEndingWith("is a character device, not a regular file");
    }

    @Test
    void aDirectoryIsRefused() throws IOException {
        Files.createDirectories(dir.resolve("creatable_vgpu_types"));

        assertThatThrownBy(() -> FILES.read(dir.resolve("creatable_vgpu_types")))
                .isInstanceOf(NotRegularFileException.class).hasMessageContaining("a directory");
    }

    @Test
    void aLinkLoopAndADanglingLinkAreErrors() throws IOException {
        Files.createSymbolicLink(dir.resolve("a"), Path.of("b"));
        Files.createSymbolicLink(dir.resolve("b"), Path.of("a"));
        Files.createSymbolicLink(dir.resolve("dangling"), Path.of("nowhere"));

        assertThatThrownBy(() -> FILES.read(dir.resolve("a"))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> FILES.read(dir.resolve("dangling"))).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void worksOnJimfsWhereNoUnixModeExists() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path root = Files.createDirectories(fs.getPath("/host"));
            Files.writeString(root.resolve("numa_node"), "1\n");
            Files.createDirectories(root.resolve("dir"));

            assertThat(FILES.read(root.resolve("numa_node"))).isEqualTo("1\n");
            assertThatThrownBy(() -> FILES.read(root.resolve("dir")))
                    .isInstanceOf(NotRegularFileException.class);
        }
    }

    @Test
    void aScanScopeReadGivesTheSameTextsAsAReadOfItsOwn() throws IOException {
        ScanScope scope = ScanScope.fresh();
        String[] contents = {"", "0x10de\n", " \t12 \n", "GRID\u2003A100-4C\u2003\n", "\u001f7\u000b",
            "x".repeat(4096), "y".repeat(4097), "z".repeat(20_000), "1".repeat(HostFiles.MAX_BYTES), "short\n"};
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < contents.length; i++) {
                Path file = dir.resolve("a" + i);
                Files.writeString(file, contents[i]);
                assertThat(FILES.read(file, scope)).isEqualTo(contents[i]).isEqualTo(FILES.read(file));
                assertThat(FILES.readStripped(file, scope)).isEqualTo(contents[i].strip());
                assertThat(FILES.readStripped(file, ScanScope.none())).isEqualTo(contents[i].strip());
            }
        }
        Files.writeString(dir.resolve("over"), "1".repeat(HostFiles.MAX_BYTES + 1));
        assertThatThrownBy(() -> FILES.read(dir.resolve("over"), scope)).isInstanceOf(IOException.class)
                .hasMessage("over is larger than 65536 bytes");
        assertThat(FILES.read(dir.resolve("a1"), scope)).isEqualTo("0x10de\n");
    }

    /**
     * The native reader stops without the read that returns 0 where the size {@code fstat} reported says the content
     * is complete (NativeFiles, docs/BUILD.md): around a page (4 KiB here, 64 KiB on some aarch64 kernels), empty
     * files (which report no size, as procfs does) and files that are all hole (no blocks, like a sysfs attribute)
     * read whole. A tmpfs or disk file cannot show kernfs's one-read text attributes; the benchmark's strace run of
     * real {@code /sys} reads does (BENCHMARKS.md, "Fewer system calls per rescan").
     */
    @Test
    void filesAroundAPageAndHolesReadWhole() throws IOException {
        int[] sizes = {0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 65535, HostFiles.MAX_BYTES};
        ScanScope scope = ScanScope.fresh();
        for (int size : sizes) {
            Path file = dir.resolve("f" + size);
            String content = "0123456789abcdef\n".repeat(size / 17 + 1).substring(0, size);
            Files.writeString(file, content);

            assertThat(FILES.read(file)).as("%d bytes", size).isEqualTo(content);
            assertThat(FILES.read(dir, file.getFileName().toString(), scope)).as("%d bytes", size)
                    .isEqualTo(content);
        }
        for (int size : new int[] {1, 4096, 8192, HostFiles.MAX_BYTES}) {
            Path hole = dir.resolve("hole" + size);
            try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(hole.toFile(), "rw")) {
                file.setLength(size);
            }

            assertThat(FILES.read(hole, scope)).as("a hole of %d bytes", size).isEqualTo("\0".repeat(size));
        }
        Path tail = dir.resolve("tail");
        try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(tail.toFile(), "rw")) {
            file.setLength(4096);
            file.seek(4095);
            file.write('\n');
        }
        assertThat(FILES.read(tail, scope)).isEqualTo("\0".repeat(4095) + "\n");
    }

    /**
     * Real kernfs text attributes (this machine's {@code /sys}, which every Linux host and CI runner mounts) read
     * whole: each reports a page as its size and no blocks, so the native reader stops at its short first read, and the
     * text must be exactly what a read to the end gives (NIO's). Run again against the packaged jar on Java 22+,
     * where the native reader answers.
     */
    @Test
    void realSysfsTextAttributesReadWholeAsAReadToTheEndGivesThem() throws Exception {
        java.util.List<Path> attributes = new java.util.ArrayList<>(java.util.List.of(
                Path.of("/sys/devices/system/cpu/online"), Path.of("/sys/devices/system/cpu/possible")));
        try (var functions = Files.list(Path.of("/sys/bus/pci/devices"))) {
            functions.limit(8).forEach(f -> attributes.addAll(java.util.List.of(f.resolve("vendor"),
                    f.resolve("uevent"), f.resolve("modalias"))));
        }
        for (Path attribute : attributes) {
            assertThat(Files.size(attribute)).as("%s reports a page", attribute).isEqualTo(4096);
            assertThat(FILES.read(attribute, ScanScope.fresh())).as(attribute.toString())
                    .isEqualTo(new String(Files.readAllBytes(attribute), java.nio.charset.StandardCharsets.US_ASCII));
        }
    }

    /**
     * A file that reports no size (procfs) is read until the read that returns 0: a waiting {@code cat}'s
     * {@code smaps} is several pages that procfs hands out about a page a read, and its mappings do not change while
     * it waits, so every mapping {@code maps} lists must be in the text, the last one included.
     */
    @Test
    void aFileWithoutASizeIsReadToItsEnd() throws Exception {
        Process cat = new ProcessBuilder("cat").start();
        try {
            Path proc = Path.of("/proc", Long.toString(cat.pid()));
            // Once cat echoes a line it has mapped everything and waits in read(2) on its stdin: maps and smaps list
            // the same mappings until it is given more (no timer involved).
            cat.getOutputStream().write("ready\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            cat.getOutputStream().flush();
            assertThat(new java.io.BufferedReader(new java.io.InputStreamReader(cat.getInputStream(),
                    java.nio.charset.StandardCharsets.US_ASCII)).readLine()).isEqualTo("ready");
            java.util.List<String> mappings = Files.readAllLines(proc.resolve("maps"));
            String smaps = FILES.read(proc.resolve("smaps"), ScanScope.fresh());

            assertThat(Files.size(proc.resolve("smaps"))).isZero();
            assertThat(smaps.length()).as("several pages, so one read cannot hold it").isGreaterThan(3 * 4096);
            assertThat(smaps.lines().filter(line -> !line.isEmpty() && !Character.isUpperCase(line.charAt(0))))
                    .containsExactlyElementsOf(mappings);
            assertThat(smaps).endsWith("\n");
        } finally {
            cat.destroy();
        }
    }

    /**
     * A read that fails after the open says why, in both readers' words: {@code /proc/self/mem} is a regular file
     * that opens, and its first page is never mapped, so {@code read(2)} at offset 0 fails with {@code EIO} (the
     * native reader learns the reason by making the failed read again through its capturing handle).
     */
    @Test
    void aReadThatFailsSaysWhy() {
        assertThatThrownBy(() -> FILES.read(Path.of("/proc/self/mem"), ScanScope.fresh()))
                .isInstanceOf(IOException.class).hasMessage("mem cannot be read: Input/output error");
    }

    @Test
    void threadsOfOneScanReadThroughItsBufferSafely() throws Exception {
        ScanScope scope = ScanScope.fresh();
        int files = 8;
        for (int i = 0; i < files; i++) {
            Files.writeString(dir.resolve("f" + i), Integer.toString(i).repeat(100 + 500 * i));
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            java.util.List<java.util.concurrent.Future<Boolean>> answers = new java.util.ArrayList<>();
            for (int task = 0; task < 4; task++) {
                answers.add(pool.submit(() -> {
                    for (int round = 0; round < 200; round++) {
                        int i = round % files;
                        if (!FILES.read(dir.resolve("f" + i), scope)
                                .equals(Integer.toString(i).repeat(100 + 500 * i))) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (java.util.concurrent.Future<Boolean> answer : answers) {
                assertThat(answer.get()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aScanScopeReadRefusesAFifoToo() throws Exception {
        Path fifo = dir.resolve("numa_node");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();

        assertThatThrownBy(() -> FILES.readStripped(fifo, ScanScope.fresh()))
                .isInstanceOf(NotRegularFileException.class)
                .hasMessageEndingWith("is a FIFO, not a regular file");
    }

    @Test
    void aSocketIsRefused() throws IOException {
        Path socket = dir.resolve("vendor");
        try (java.nio.channels.ServerSocketChannel server =
                java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(socket));

            assertThatThrownBy(() -> FILES.read(socket))
                    .isInstanceOf(NotRegularFileException.class)
                    .hasMessageEndingWith("is a socket, not a regular file");
        }
    }

    @Test
    void aPathThroughAFileIsAnErrorAsNioGivesIt() throws IOException {
        Files.writeString(dir.resolve("vendor"), "0x10de\n");

        // ENOTDIR: Java 17's NIO says "Not a directory", later ones NoSuchFileException; both readers say what it says
        assertThatThrownBy(() -> FILES.read(dir.resolve("vendor"), "x", ScanScope.none()))
                .isInstanceOf(java.nio.file.FileSystemException.class)
                .hasMessageStartingWith(dir.resolve("vendor/x").toString());
    }

    @Test
    void missingFilesNameTheFullPath() {
        Path device = dir.resolve("0000:1b:00.4");

        assertThatThrownBy(() -> FILES.read(device, "nvidia/current_vgpu_type", ScanScope.none()))
                .isInstanceOf(NoSuchFileException.class)
                .hasMessage(device.resolve("nvidia/current_vgpu_type").toString());
    }

    @Test
    void aPathThatFailedBeforeIsAnsweredAsAnyOtherWhenItFailsAgainAndWhenItAppears() throws IOException {
        // The native reader asks a path whose last open or link read failed through another handle (docs/BUILD.md,
        // "The native reader's reads"): the answers must not change with that, in either direction.
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4"));
        Path attribute = device.resolve("gpu_instance_id");
        for (int round = 0; round < 3; round++) {
            assertThatThrownBy(() -> FILES.read(device, "gpu_instance_id", ScanScope.none()))
                    .isInstanceOf(NoSuchFileException.class).hasMessage(attribute.toString())
                    .extracting(e -> ((NoSuchFileException) e).getFile()).isEqualTo(attribute.toString());
        }
        Files.writeString(attribute, "3\n");
        for (int round = 0; round < 2; round++) {
            assertThat(FILES.readStripped(device, "gpu_instance_id", ScanScope.none())).isEqualTo("3");
        }
        Files.delete(attribute);
        assertThatThrownBy(() -> FILES.read(device, "gpu_instance_id", ScanScope.none()))
                .isInstanceOf(NoSuchFileException.class).hasMessage(attribute.toString());
        Files.createDirectory(attribute);
        assertThatThrownBy(() -> FILES.read(device, "gpu_instance_id", ScanScope.none()))
                .isInstanceOf(NotRegularFileException.class);

        Path driver = device.resolve("driver");
        for (int round = 0; round < 3; round++) {
            assertThatThrownBy(() -> FILES.linkName(dir, "0000:1b:00.4", "driver", ScanScope.none()))
                    .isInstanceOf(NoSuchFileException.class).hasMessage(driver.toString())
                    .extracting(e -> ((NoSuchFileException) e).getFile()).isEqualTo(driver.toString());
        }
        Files.createSymbolicLink(driver, Path.of("../../../bus/pci/drivers/vfio-pci"));
        assertThat(FILES.linkName(dir, "0000:1b:00.4", "driver", ScanScope.none())).isEqualTo("vfio-pci");
        assertThat(FILES.linkName(device, "driver", ScanScope.none())).isEqualTo("vfio-pci");
        Files.delete(driver);
        Files.writeString(driver, "not a link\n");
        for (int round = 0; round < 2; round++) {
            assertThatThrownBy(() -> FILES.linkName(dir, "0000:1b:00.4", "driver", ScanScope.none()))
                    .isInstanceOf(java.nio.file.NotLinkException.class).hasMessageContaining("driver");
        }
        Files.delete(driver);
        assertThatThrownBy(() -> FILES.linkName(device, "driver", ScanScope.none())).isInstanceOf(NoSuchFileException.class)
                .hasMessage(driver.toString());

        Path vfioDev = device.resolve("vfio-dev");
        for (int round = 0; round < 2; round++) {
            assertThatThrownBy(() -> FILES.list(vfioDev, ScanScope.none())).isInstanceOf(NoSuchFileException.class)
                    .hasMessage(vfioDev.toString());
        }
        Files.createDirectories(vfioDev.resolve("vfio3"));
        assertThat(FILES.list(vfioDev, ScanScope.none())).containsExactly("vfio3");
    }

    @Test
    void manyFailingPathsOnOneThreadStillGetTheirOwnAnswers() throws IOException {
        // More failing paths than the native reader's per-thread set holds (it starts afresh when half full), read
        // twice, then every other one created: each answer is the path's own.
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4"));
        int count = 5_000;
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < count; i++) {
                String name = "missing" + i;
                assertThatThrownBy(() -> FILES.read(device, name, ScanScope.none()))
                        .isInstanceOf(NoSuchFileException.class).hasMessage(device.resolve(name).toString());
            }
        }
        for (int i = 0; i < count; i += 2) {
            Files.writeString(device.resolve("missing" + i), i + "\n");
        }
        for (int i = 0; i < count; i++) {
            String name = "missing" + i;
            if (i % 2 == 0) {
                assertThat(FILES.readStripped(device, name, ScanScope.none())).isEqualTo(String.valueOf(i));
            } else {
                assertThatThrownBy(() -> FILES.read(device, name, ScanScope.none()))
                        .isInstanceOf(NoSuchFileException.class).hasMessage(device.resolve(name).toString());
            }
        }
    }

    @Test
    void namesOutsideAsciiAreReadAsNioReadsThem() throws IOException {
        Path odd = Files.createDirectories(dir.resolve("typ\u00e9"));
        Files.writeString(odd.resolve("name"), "GRID \u00e9\n");

        assertThat(FILES.readStripped(odd, "name", ScanScope.fresh())).isEqualTo("GRID \u00e9");
        assertThat(FILES.list(dir, ScanScope.none())).containsExactly("typ\u00e9");
    }

    @Test
    void linkNamesAreTheLastComponentAndTheLinkIsNotFollowed() throws IOException {
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4"));
        Files.createSymbolicLink(device.resolve("driver"), Path.of("../../../bus/pci/drivers/nvidia"));
        Files.createSymbolicLink(device.resolve("iommu_group"), Path.of("41"));
        Files.createSymbolicLink(device.resolve("a"), Path.of("b"));
        Files.createSymbolicLink(device.resolve("b"), Path.of("a"));

        for (int round = 0; round < 3; round++) {
            assertThat(FILES.linkName(device, "driver", ScanScope.none())).isEqualTo("nvidia");
        }
        assertThat(FILES.linkName(device, "iommu_group", ScanScope.none())).isEqualTo("41");
        assertThat(FILES.linkName(device, "a", ScanScope.none())).isEqualTo("b");
        assertThat(FILES.linkName(dir, "0000:1b:00.4/driver", ScanScope.none())).isEqualTo("nvidia");
        // In three parts, the entry as a listing names it: the same answers.
        for (int round = 0; round < 3; round++) {
            assertThat(FILES.linkName(dir, "0000:1b:00.4", "driver", ScanScope.none())).isEqualTo("nvidia");
        }
        assertThat(FILES.linkName(dir, "0000:1b:00.4", "iommu_group", ScanScope.none())).isEqualTo("41");
        // An entry the native path cannot encode (not ASCII) is read the NIO way, with the same answer.
        Path odd = Files.createDirectories(dir.resolve("typ\u00e9"));
        Files.createSymbolicLink(odd.resolve("driver"), Path.of("../drivers/vfio-pci"));
        assertThat(FILES.linkName(dir, "typ\u00e9", "driver", ScanScope.none())).isEqualTo("vfio-pci");
    }

    @Test
    void linkNameErrorsSayWhatIsWrong() throws Exception {
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4"));
        Files.writeString(device.resolve("vendor"), "0x10de\n");
        // A link text ending in '/' (a Path would drop the slash, so ln makes it)
        Process ln = new ProcessBuilder("ln", "-s", "../", device.resolve("physfn").toString()).start();
        assertThat(ln.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(ln.exitValue()).isZero();
        Files.createSymbolicLink(device.resolve("odd"), Path.of("../bus/dri\nver"));

        assertThatThrownBy(() -> FILES.linkName(device, "driver", ScanScope.none())).isInstanceOf(NoSuchFileException.class)
                .hasMessage(device.resolve("driver").toString());
        assertThatThrownBy(() -> FILES.linkName(device, "vendor", ScanScope.none()))
                .isInstanceOf(java.nio.file.NotLinkException.class);
        assertThatThrownBy(() -> FILES.linkName(device, "physfn", ScanScope.none())).isInstanceOf(IOException.class)
                .hasMessage("physfn link text \"../\" has no last component");
        assertThat(FILES.linkName(device, "odd", ScanScope.none())).isEqualTo("dri\nver");

        // The same failures in three parts, naming the same file.
        assertThatThrownBy(() -> FILES.linkName(dir, "0000:1b:00.4", "driver", ScanScope.none()))
                .isInstanceOf(NoSuchFileException.class).hasMessage(device.resolve("driver").toString());
        assertThatThrownBy(() -> FILES.linkName(dir, "0000:1b:00.4", "vendor", ScanScope.none()))
                .isInstanceOf(java.nio.file.NotLinkException.class).hasMessageContaining("vendor");
        assertThatThrownBy(() -> FILES.linkName(dir, "0000:1b:00.4", "physfn", ScanScope.none())).isInstanceOf(IOException.class)
                .hasMessage("physfn link text \"../\" has no last component");
        assertThat(FILES.linkName(dir, "0000:1b:00.4", "odd", ScanScope.none())).isEqualTo("dri\nver");
        assertThatThrownBy(() -> FILES.linkName(dir, "0000:99:00.0", "driver", ScanScope.none()))
                .isInstanceOf(NoSuchFileException.class).hasMessage(dir.resolve("0000:99:00.0/driver").toString());
    }

    @Test
    void aListingGivesEveryNameOnceWithoutDots() throws IOException {
        java.util.Set<String> made = new java.util.HashSet<>();
        for (int i = 0; i < 3000; i++) {
            String name = String.format("0000:%02x:%02x.%d", i / 256, (i / 8) % 32, i % 8) + "-" + i;
            Files.createSymbolicLink(dir.resolve(name), Path.of("../../devices/pci0000:00/" + name));
            made.add(name);
        }
        Files.createDirectories(dir.resolve("plain"));
        made.add("plain");

        assertThat(FILES.list(dir, ScanScope.none())).hasSize(made.size()).containsExactlyInAnyOrderElementsOf(made);
        assertThat(FILES.list(dir.resolve("plain"), ScanScope.none())).isEmpty();
    }

    @Test
    void listingSomethingElseIsAnError() throws IOException {
        Files.writeString(dir.resolve("vendor"), "0x10de\n");
        Files.createSymbolicLink(dir.resolve("loop"), Path.of("loop"));

        assertThatThrownBy(() -> FILES.list(dir.resolve("devices"), ScanScope.none())).isInstanceOf(NoSuchFileException.class)
                .hasMessage(dir.resolve("devices").toString());
        assertThatThrownBy(() -> FILES.list(dir.resolve("vendor"), ScanScope.none()))
                .isInstanceOf(java.nio.file.NotDirectoryException.class);
        assertThatThrownBy(() -> FILES.list(dir.resolve("loop"), ScanScope.none())).isInstanceOf(IOException.class);
    }

    /**
     * {@code isDirectory} and {@code exists} answer what {@link Files#isDirectory} and {@link Files#exists} answer,
     * links followed or not, for every kind of entry a hostile tree may hold (both readers: one {@code fstatat} in the
     * native one, NIO in the other).
     */
    @Test
    void typeQuestionsAnswerAsNioDoes() throws Exception {
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4"));
        Files.createDirectories(dir.resolve("drivers/nvidia"));
        Files.writeString(device.resolve("vendor"), "0x10de\n");
        Files.createDirectories(device.resolve("mdev_supported_types"));
        Files.createSymbolicLink(device.resolve("driver"), Path.of("../drivers/nvidia"));
        Files.createSymbolicLink(device.resolve("gone"), Path.of("../drivers/vfio-pci"));
        Files.createSymbolicLink(device.resolve("to-file"), Path.of("vendor"));
        Files.createSymbolicLink(device.resolve("loop"), Path.of("loop"));
        Files.createSymbolicLink(dir.resolve("0000:1b:00.5"), Path.of("nowhere"));
        Files.createSymbolicLink(dir.resolve("0000:1b:00.6"), device.getFileName());
        Files.createDirectories(device.resolve("typ\u00e9"));
        Process mkfifo = new ProcessBuilder("mkfifo", device.resolve("fifo").toString()).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        String[] names = {"vendor", "mdev_supported_types", "driver", "gone", "to-file", "loop", "fifo", "missing",
            "vendor/x", "typ\u00e9"};

        for (String name : names) {
            Path path = device.resolve(name);
            assertThat(FILES.isDirectory(device, name, ScanScope.none())).as("isDirectory %s", name)
                    .isEqualTo(Files.isDirectory(path));
            assertThat(FILES.exists(device, name, ScanScope.none())).as("exists %s", name).isEqualTo(Files.exists(path));
            assertThat(FILES.exists(device, name, ScanScope.none(), java.nio.file.LinkOption.NOFOLLOW_LINKS))
                    .as("exists %s, link not followed", name)
                    .isEqualTo(Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS));
        }
        for (String function : new String[] {"0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6", "0000:1b:00.7"}) {
            assertThat(FILES.isDirectory(dir.resolve(function), ScanScope.none())).as("isDirectory %s", function)
                    .isEqualTo(Files.isDirectory(dir.resolve(function)));
        }
        // spot checks, so that a reader and NIO cannot agree on nonsense unnoticed
        assertThat(FILES.isDirectory(device, "driver", ScanScope.none())).isTrue();
        assertThat(FILES.isDirectory(device, "gone", ScanScope.none())).isFalse();
        assertThat(FILES.exists(device, "gone", ScanScope.none())).isFalse();
        assertThat(FILES.exists(device, "gone", ScanScope.none(), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(FILES.exists(device, "fifo", ScanScope.none())).isTrue();
        assertThat(FILES.isDirectory(dir.resolve("0000:1b:00.5"), ScanScope.none())).isFalse();
        assertThat(FILES.isDirectory(dir.resolve("0000:1b:00.6"), ScanScope.none())).isTrue();
    }

    @Test
    void aListingByNameIsTheListingOfTheResolvedPath() throws IOException {
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4/vfio-dev/vfio7"));
        Files.createDirectories(dir.resolve("0000:1b:00.4/vfio-dev/vfio12"));
        Files.writeString(dir.resolve("0000:1b:00.4/vendor"), "0x10de\n");
        Path function = device.getParent().getParent();

        assertThat(FILES.list(function, "vfio-dev", ScanScope.none())).containsExactlyInAnyOrder("vfio7", "vfio12");
        assertThatThrownBy(() -> FILES.list(function, "missing", ScanScope.none())).isInstanceOf(NoSuchFileException.class)
                .hasMessage(function.resolve("missing").toString());
        assertThatThrownBy(() -> FILES.list(function, "vendor", ScanScope.none()))
                .isInstanceOf(java.nio.file.NotDirectoryException.class)
                .hasMessage(function.resolve("vendor").toString());
    }

    @Test
    void linksAndListingsWorkOnJimfs() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path bus = Files.createDirectories(fs.getPath("/host/sys/bus/pci/devices"));
            Path device = Files.createDirectories(fs.getPath("/host/sys/devices/0000:1b:00.0"));
            Files.createSymbolicLink(bus.resolve("0000:1b:00.0"), device);
            Files.createSymbolicLink(device.resolve("driver"), fs.getPath("../../bus/pci/drivers/vfio-pci"));

            assertThat(FILES.list(bus, ScanScope.none())).containsExactly("0000:1b:00.0");
            assertThat(FILES.linkName(bus.resolve("0000:1b:00.0"), "driver", ScanScope.none())).isEqualTo("vfio-pci");
            assertThat(FILES.list(fs.getPath("/host/sys"), "devices", ScanScope.none())).containsExactly("0000:1b:00.0");
            assertThat(FILES.isDirectory(bus.resolve("0000:1b:00.0"), ScanScope.none())).isTrue();
            assertThat(FILES.isDirectory(bus.resolve("0000:1b:00.0"), "driver", ScanScope.none())).isFalse();
            assertThat(FILES.exists(bus.resolve("0000:1b:00.0"), "driver", ScanScope.none())).isFalse();
            assertThat(FILES.exists(bus.resolve("0000:1b:00.0"), "driver", ScanScope.none(),
                    java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
        }
    }
}
