package dev.vgpu.core.spi;

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
class AttributeFilesTest {

    @TempDir
    Path dir;

    @Test
    void readsASmallFileAsUtf8WithReplacementForGarbage() throws IOException {
        Files.write(dir.resolve("name"), new byte[] {'G', 'R', 'I', 'D', (byte) 0xff, '\n'});

        assertThat(AttributeFiles.read(dir.resolve("name"))).isEqualTo("GRID\ufffd\n");
    }

    @Test
    void readsExactlyTheLimitAndRefusesOneByteMore() throws IOException {
        Files.writeString(dir.resolve("full"), "1".repeat(AttributeFiles.MAX_BYTES));
        Files.writeString(dir.resolve("over"), "1".repeat(AttributeFiles.MAX_BYTES + 1));

        assertThat(AttributeFiles.read(dir.resolve("full"))).hasSize(AttributeFiles.MAX_BYTES);
        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("over"))).isInstanceOf(IOException.class)
                .hasMessage("over is larger than 65536 bytes");
    }

    @Test
    void aFifoIsRefusedWithoutOpeningIt() throws Exception {
        Path fifo = dir.resolve("current_vgpu_type");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        Files.createSymbolicLink(dir.resolve("link"), fifo.getFileName());

        assertThatThrownBy(() -> AttributeFiles.read(fifo)).isInstanceOf(AttributeFiles.NotRegularFileException.class)
                .hasMessageContaining("current_vgpu_type").hasMessageEndingWith("is a FIFO, not a regular file");
        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("link")))
                .isInstanceOf(AttributeFiles.NotRegularFileException.class).hasMessageContaining("FIFO");
    }

    @Test
    void aLinkToADeviceNodeIsRefused() throws IOException {
        Files.createSymbolicLink(dir.resolve("vendor"), Path.of("/dev/zero"));

        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("vendor")))
                .isInstanceOf(AttributeFiles.NotRegularFileException.class)
                .hasMessageEndingWith("is a character device, not a regular file");
    }

    @Test
    void aDirectoryIsRefused() throws IOException {
        Files.createDirectories(dir.resolve("creatable_vgpu_types"));

        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("creatable_vgpu_types")))
                .isInstanceOf(AttributeFiles.NotRegularFileException.class).hasMessageContaining("a directory");
    }

    @Test
    void aLinkLoopAndADanglingLinkAreErrors() throws IOException {
        Files.createSymbolicLink(dir.resolve("a"), Path.of("b"));
        Files.createSymbolicLink(dir.resolve("b"), Path.of("a"));
        Files.createSymbolicLink(dir.resolve("dangling"), Path.of("nowhere"));

        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("a"))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("dangling"))).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void worksOnJimfsWhereNoUnixModeExists() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path root = Files.createDirectories(fs.getPath("/host"));
            Files.writeString(root.resolve("numa_node"), "1\n");
            Files.createDirectories(root.resolve("dir"));

            assertThat(AttributeFiles.read(root.resolve("numa_node"))).isEqualTo("1\n");
            assertThatThrownBy(() -> AttributeFiles.read(root.resolve("dir")))
                    .isInstanceOf(AttributeFiles.NotRegularFileException.class);
        }
    }

    @Test
    void aScanScopeReadGivesTheSameTextsAsAReadOfItsOwn() throws IOException {
        ScanScope scope = ScanScope.fresh();
        String[] contents = {"", "0x10de\n", " \t12 \n", "GRID\u2003A100-4C\u2003\n", "\u001f7\u000b",
            "x".repeat(4096), "y".repeat(4097), "z".repeat(20_000), "1".repeat(AttributeFiles.MAX_BYTES), "short\n"};
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < contents.length; i++) {
                Path file = dir.resolve("a" + i);
                Files.writeString(file, contents[i]);
                assertThat(AttributeFiles.read(file, scope)).isEqualTo(contents[i]).isEqualTo(AttributeFiles.read(file));
                assertThat(AttributeFiles.readStripped(file, scope)).isEqualTo(contents[i].strip());
                assertThat(AttributeFiles.readStripped(file, ScanScope.none())).isEqualTo(contents[i].strip());
            }
        }
        Files.writeString(dir.resolve("over"), "1".repeat(AttributeFiles.MAX_BYTES + 1));
        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("over"), scope)).isInstanceOf(IOException.class)
                .hasMessage("over is larger than 65536 bytes");
        assertThat(AttributeFiles.read(dir.resolve("a1"), scope)).isEqualTo("0x10de\n");
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
        int[] sizes = {0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 65535, AttributeFiles.MAX_BYTES};
        ScanScope scope = ScanScope.fresh();
        for (int size : sizes) {
            Path file = dir.resolve("f" + size);
            String content = "0123456789abcdef\n".repeat(size / 17 + 1).substring(0, size);
            Files.writeString(file, content);

            assertThat(AttributeFiles.read(file)).as("%d bytes", size).isEqualTo(content);
            assertThat(AttributeFiles.read(dir, file.getFileName().toString(), scope)).as("%d bytes", size)
                    .isEqualTo(content);
        }
        for (int size : new int[] {1, 4096, 8192, AttributeFiles.MAX_BYTES}) {
            Path hole = dir.resolve("hole" + size);
            try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(hole.toFile(), "rw")) {
                file.setLength(size);
            }

            assertThat(AttributeFiles.read(hole, scope)).as("a hole of %d bytes", size).isEqualTo("\0".repeat(size));
        }
        Path tail = dir.resolve("tail");
        try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(tail.toFile(), "rw")) {
            file.setLength(4096);
            file.seek(4095);
            file.write('\n');
        }
        assertThat(AttributeFiles.read(tail, scope)).isEqualTo("\0".repeat(4095) + "\n");
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
            assertThat(AttributeFiles.read(attribute, ScanScope.fresh())).as(attribute.toString())
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
            String smaps = AttributeFiles.read(proc.resolve("smaps"), ScanScope.fresh());

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
        assertThatThrownBy(() -> AttributeFiles.read(Path.of("/proc/self/mem"), ScanScope.fresh()))
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
                        if (!AttributeFiles.read(dir.resolve("f" + i), scope)
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

        assertThatThrownBy(() -> AttributeFiles.readStripped(fifo, ScanScope.fresh()))
                .isInstanceOf(AttributeFiles.NotRegularFileException.class)
                .hasMessageEndingWith("is a FIFO, not a regular file");
    }

    @Test
    void aSocketIsRefused() throws IOException {
        Path socket = dir.resolve("vendor");
        try (java.nio.channels.ServerSocketChannel server =
                java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(socket));

            assertThatThrownBy(() -> AttributeFiles.read(socket))
                    .isInstanceOf(AttributeFiles.NotRegularFileException.class)
                    .hasMessageEndingWith("is a socket, not a regular file");
        }
    }

    @Test
    void aPathThroughAFileIsAnErrorAsNioGivesIt() throws IOException {
        Files.writeString(dir.resolve("vendor"), "0x10de\n");

        // ENOTDIR: Java 17's NIO says "Not a directory", later ones NoSuchFileException; both readers say what it says
        assertThatThrownBy(() -> AttributeFiles.read(dir.resolve("vendor"), "x", ScanScope.none()))
                .isInstanceOf(java.nio.file.FileSystemException.class)
                .hasMessageStartingWith(dir.resolve("vendor/x").toString());
    }

    @Test
    void missingFilesNameTheFullPath() {
        Path device = dir.resolve("0000:1b:00.4");

        assertThatThrownBy(() -> AttributeFiles.read(device, "nvidia/current_vgpu_type", ScanScope.none()))
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
            assertThatThrownBy(() -> AttributeFiles.read(device, "gpu_instance_id", ScanScope.none()))
                    .isInstanceOf(NoSuchFileException.class).hasMessage(attribute.toString())
                    .extracting(e -> ((NoSuchFileException) e).getFile()).isEqualTo(attribute.toString());
        }
        Files.writeString(attribute, "3\n");
        for (int round = 0; round < 2; round++) {
            assertThat(AttributeFiles.readStripped(device, "gpu_instance_id", ScanScope.none())).isEqualTo("3");
        }
        Files.delete(attribute);
        assertThatThrownBy(() -> AttributeFiles.read(device, "gpu_instance_id", ScanScope.none()))
                .isInstanceOf(NoSuchFileException.class).hasMessage(attribute.toString());
        Files.createDirectory(attribute);
        assertThatThrownBy(() -> AttributeFiles.read(device, "gpu_instance_id", ScanScope.none()))
                .isInstanceOf(AttributeFiles.NotRegularFileException.class);

        Path driver = device.resolve("driver");
        for (int round = 0; round < 3; round++) {
            assertThatThrownBy(() -> AttributeFiles.linkName(dir, "0000:1b:00.4", "driver"))
                    .isInstanceOf(NoSuchFileException.class).hasMessage(driver.toString())
                    .extracting(e -> ((NoSuchFileException) e).getFile()).isEqualTo(driver.toString());
        }
        Files.createSymbolicLink(driver, Path.of("../../../bus/pci/drivers/vfio-pci"));
        assertThat(AttributeFiles.linkName(dir, "0000:1b:00.4", "driver")).isEqualTo("vfio-pci");
        assertThat(AttributeFiles.linkName(device, "driver")).isEqualTo("vfio-pci");
        Files.delete(driver);
        Files.writeString(driver, "not a link\n");
        for (int round = 0; round < 2; round++) {
            assertThatThrownBy(() -> AttributeFiles.linkName(dir, "0000:1b:00.4", "driver"))
                    .isInstanceOf(java.nio.file.NotLinkException.class).hasMessageContaining("driver");
        }
        Files.delete(driver);
        assertThatThrownBy(() -> AttributeFiles.linkName(device, "driver")).isInstanceOf(NoSuchFileException.class)
                .hasMessage(driver.toString());

        Path vfioDev = device.resolve("vfio-dev");
        for (int round = 0; round < 2; round++) {
            assertThatThrownBy(() -> AttributeFiles.list(vfioDev)).isInstanceOf(NoSuchFileException.class)
                    .hasMessage(vfioDev.toString());
        }
        Files.createDirectories(vfioDev.resolve("vfio3"));
        assertThat(AttributeFiles.list(vfioDev)).containsExactly("vfio3");
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
                assertThatThrownBy(() -> AttributeFiles.read(device, name, ScanScope.none()))
                        .isInstanceOf(NoSuchFileException.class).hasMessage(device.resolve(name).toString());
            }
        }
        for (int i = 0; i < count; i += 2) {
            Files.writeString(device.resolve("missing" + i), i + "\n");
        }
        for (int i = 0; i < count; i++) {
            String name = "missing" + i;
            if (i % 2 == 0) {
                assertThat(AttributeFiles.readStripped(device, name, ScanScope.none())).isEqualTo(String.valueOf(i));
            } else {
                assertThatThrownBy(() -> AttributeFiles.read(device, name, ScanScope.none()))
                        .isInstanceOf(NoSuchFileException.class).hasMessage(device.resolve(name).toString());
            }
        }
    }

    @Test
    void namesOutsideAsciiAreReadAsNioReadsThem() throws IOException {
        Path odd = Files.createDirectories(dir.resolve("typ\u00e9"));
        Files.writeString(odd.resolve("name"), "GRID \u00e9\n");

        assertThat(AttributeFiles.readStripped(odd, "name", ScanScope.fresh())).isEqualTo("GRID \u00e9");
        assertThat(AttributeFiles.list(dir)).containsExactly("typ\u00e9");
    }

    @Test
    void linkNamesAreTheLastComponentAndTheLinkIsNotFollowed() throws IOException {
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4"));
        Files.createSymbolicLink(device.resolve("driver"), Path.of("../../../bus/pci/drivers/nvidia"));
        Files.createSymbolicLink(device.resolve("iommu_group"), Path.of("41"));
        Files.createSymbolicLink(device.resolve("a"), Path.of("b"));
        Files.createSymbolicLink(device.resolve("b"), Path.of("a"));

        for (int round = 0; round < 3; round++) {
            assertThat(AttributeFiles.linkName(device, "driver")).isEqualTo("nvidia");
        }
        assertThat(AttributeFiles.linkName(device, "iommu_group")).isEqualTo("41");
        assertThat(AttributeFiles.linkName(device, "a")).isEqualTo("b");
        assertThat(AttributeFiles.linkName(dir, "0000:1b:00.4/driver")).isEqualTo("nvidia");
        // In three parts, the entry as a listing names it: the same answers.
        for (int round = 0; round < 3; round++) {
            assertThat(AttributeFiles.linkName(dir, "0000:1b:00.4", "driver")).isEqualTo("nvidia");
        }
        assertThat(AttributeFiles.linkName(dir, "0000:1b:00.4", "iommu_group")).isEqualTo("41");
        // An entry the native path cannot encode (not ASCII) is read the NIO way, with the same answer.
        Path odd = Files.createDirectories(dir.resolve("typ\u00e9"));
        Files.createSymbolicLink(odd.resolve("driver"), Path.of("../drivers/vfio-pci"));
        assertThat(AttributeFiles.linkName(dir, "typ\u00e9", "driver")).isEqualTo("vfio-pci");
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

        assertThatThrownBy(() -> AttributeFiles.linkName(device, "driver")).isInstanceOf(NoSuchFileException.class)
                .hasMessage(device.resolve("driver").toString());
        assertThatThrownBy(() -> AttributeFiles.linkName(device, "vendor"))
                .isInstanceOf(java.nio.file.NotLinkException.class);
        assertThatThrownBy(() -> AttributeFiles.linkName(device, "physfn")).isInstanceOf(IOException.class)
                .hasMessage("physfn link text \"../\" has no last component");
        assertThat(AttributeFiles.linkName(device, "odd")).isEqualTo("dri\nver");

        // The same failures in three parts, naming the same file.
        assertThatThrownBy(() -> AttributeFiles.linkName(dir, "0000:1b:00.4", "driver"))
                .isInstanceOf(NoSuchFileException.class).hasMessage(device.resolve("driver").toString());
        assertThatThrownBy(() -> AttributeFiles.linkName(dir, "0000:1b:00.4", "vendor"))
                .isInstanceOf(java.nio.file.NotLinkException.class).hasMessageContaining("vendor");
        assertThatThrownBy(() -> AttributeFiles.linkName(dir, "0000:1b:00.4", "physfn")).isInstanceOf(IOException.class)
                .hasMessage("physfn link text \"../\" has no last component");
        assertThat(AttributeFiles.linkName(dir, "0000:1b:00.4", "odd")).isEqualTo("dri\nver");
        assertThatThrownBy(() -> AttributeFiles.linkName(dir, "0000:99:00.0", "driver"))
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

        assertThat(AttributeFiles.list(dir)).hasSize(made.size()).containsExactlyInAnyOrderElementsOf(made);
        assertThat(AttributeFiles.list(dir.resolve("plain"))).isEmpty();
    }

    @Test
    void listingSomethingElseIsAnError() throws IOException {
        Files.writeString(dir.resolve("vendor"), "0x10de\n");
        Files.createSymbolicLink(dir.resolve("loop"), Path.of("loop"));

        assertThatThrownBy(() -> AttributeFiles.list(dir.resolve("devices"))).isInstanceOf(NoSuchFileException.class)
                .hasMessage(dir.resolve("devices").toString());
        assertThatThrownBy(() -> AttributeFiles.list(dir.resolve("vendor")))
                .isInstanceOf(java.nio.file.NotDirectoryException.class);
        assertThatThrownBy(() -> AttributeFiles.list(dir.resolve("loop"))).isInstanceOf(IOException.class);
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
            assertThat(AttributeFiles.isDirectory(device, name)).as("isDirectory %s", name)
                    .isEqualTo(Files.isDirectory(path));
            assertThat(AttributeFiles.exists(device, name)).as("exists %s", name).isEqualTo(Files.exists(path));
            assertThat(AttributeFiles.exists(device, name, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                    .as("exists %s, link not followed", name)
                    .isEqualTo(Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS));
        }
        for (String function : new String[] {"0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6", "0000:1b:00.7"}) {
            assertThat(AttributeFiles.isDirectory(dir.resolve(function))).as("isDirectory %s", function)
                    .isEqualTo(Files.isDirectory(dir.resolve(function)));
        }
        // spot checks, so that a reader and NIO cannot agree on nonsense unnoticed
        assertThat(AttributeFiles.isDirectory(device, "driver")).isTrue();
        assertThat(AttributeFiles.isDirectory(device, "gone")).isFalse();
        assertThat(AttributeFiles.exists(device, "gone")).isFalse();
        assertThat(AttributeFiles.exists(device, "gone", java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(AttributeFiles.exists(device, "fifo")).isTrue();
        assertThat(AttributeFiles.isDirectory(dir.resolve("0000:1b:00.5"))).isFalse();
        assertThat(AttributeFiles.isDirectory(dir.resolve("0000:1b:00.6"))).isTrue();
    }

    @Test
    void aListingByNameIsTheListingOfTheResolvedPath() throws IOException {
        Path device = Files.createDirectories(dir.resolve("0000:1b:00.4/vfio-dev/vfio7"));
        Files.createDirectories(dir.resolve("0000:1b:00.4/vfio-dev/vfio12"));
        Files.writeString(dir.resolve("0000:1b:00.4/vendor"), "0x10de\n");
        Path function = device.getParent().getParent();

        assertThat(AttributeFiles.list(function, "vfio-dev")).containsExactlyInAnyOrder("vfio7", "vfio12");
        assertThatThrownBy(() -> AttributeFiles.list(function, "missing")).isInstanceOf(NoSuchFileException.class)
                .hasMessage(function.resolve("missing").toString());
        assertThatThrownBy(() -> AttributeFiles.list(function, "vendor"))
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

            assertThat(AttributeFiles.list(bus)).containsExactly("0000:1b:00.0");
            assertThat(AttributeFiles.linkName(bus.resolve("0000:1b:00.0"), "driver")).isEqualTo("vfio-pci");
            assertThat(AttributeFiles.list(fs.getPath("/host/sys"), "devices")).containsExactly("0000:1b:00.0");
            assertThat(AttributeFiles.isDirectory(bus.resolve("0000:1b:00.0"))).isTrue();
            assertThat(AttributeFiles.isDirectory(bus.resolve("0000:1b:00.0"), "driver")).isFalse();
            assertThat(AttributeFiles.exists(bus.resolve("0000:1b:00.0"), "driver")).isFalse();
            assertThat(AttributeFiles.exists(bus.resolve("0000:1b:00.0"), "driver",
                    java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
        }
    }
}
