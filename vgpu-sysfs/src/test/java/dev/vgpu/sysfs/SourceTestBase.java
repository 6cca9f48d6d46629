package dev.vgpu.sysfs;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.Skipped;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.core.PciAddress;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shared fixture of the source contract tests: a fresh host root per test on the file system a subclass
 * picks (jimfs or a temporary directory), a {@link SysfsTree} on it and small readers
 * of a {@link Discovery}.
 */
abstract class SourceTestBase {

    static final PassthroughSource PASSTHROUGH = new PassthroughSource();
    static final MdevSource MDEV = new MdevSource();
    static final VendorVfioSource VENDOR = new VendorVfioSource();
    static final List<DeviceSource> ALL = List.of(PASSTHROUGH, MDEV, VENDOR);
    static final PciIds NAMES = pciIds("10de  NVIDIA Corporation\n"
            + "\t2236  GA102GL [A10]\n"
            + "\t2335  GH100 [H200 SXM 141GB]\n"
            + "\t22e8  GA102 High Definition Audio Controller\n"
            + "\t2342  GH100 [GH200 120GB / 480GB]\n");

    @TempDir
    Path tempDir;
    private FileSystem jimfs;
    SysfsTree tree;

    /** The directory that stands for the host's {@code /}; empty at first. */
    abstract Path newRoot();

    @BeforeEach
    void createTree() {
        tree = SysfsTree.at(newRoot());
    }

    @AfterEach
    void closeJimfs() throws IOException {
        if (jimfs != null) {
            jimfs.close();
        }
    }

    Path jimfsRoot() {
        jimfs = Jimfs.newFileSystem(Configuration.unix());
        try {
            return Files.createDirectories(jimfs.getPath("/host"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Host host() {
        return tree.host().withPciIds(NAMES);
    }

    static PciIds pciIds(String text) {
        try {
            return PciIds.parse(new StringReader(text), Set.of("10de"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Discovery scan(DeviceSource source, Host host) {
        try {
            return source.discover(host);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Discovery scan(DeviceSource source) {
        return scan(source, host());
    }

    /** Resource name → its device ids, sorted. */
    static Map<String, List<String>> resources(Discovery found) {
        return found.devices().stream().collect(Collectors.groupingBy(d -> d.resource().name(), TreeMap::new,
                Collectors.mapping(Device::id, Collectors.collectingAndThen(Collectors.toList(),
                        ids -> ids.stream().sorted().toList()))));
    }

    /** Skipped id → reason. */
    static Map<String, String> skips(Discovery found) {
        return found.skipped().stream().collect(Collectors.toMap(Skipped::id, Skipped::reason, (a, b) -> a + " | " + b,
                TreeMap::new));
    }

    static Device device(Discovery found, String id) {
        return found.devices().stream().filter(d -> d.id().equals(id)).findFirst()
                .orElseThrow(() -> new AssertionError(id + " not found in " + found));
    }

    /** A resolver that answers from a table per PF and counts every question. */
    static final class CountingResolver implements VgpuTypeResolver {
        final ConcurrentLinkedQueue<PciAddress> asked = new ConcurrentLinkedQueue<>();
        private final Map<String, Map<Long, String>> answers;

        CountingResolver(Map<String, Map<Long, String>> answers) {
            this.answers = answers;
        }

        @Override
        public VgpuTypeNames supportedTypes(PciAddress physicalFunction) {
            asked.add(physicalFunction);
            Map<Long, String> names = answers.get(physicalFunction.toString());
            return names == null ? VgpuTypeNames.unavailable("NVML_ERROR_NOT_FOUND for " + physicalFunction)
                    : VgpuTypeNames.of(names);
        }
    }
}
