package dev.vgpu.bench.sysfs;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A full scan of the three sysfs sources on {@link LargeHost} (real file system, temporary directory) against
 * two {@link FloorPlan floors}: the same files and links read once each with plain {@link Files} calls
 * ({@code floor}), and the operations of each source one after the other ({@code floorPerSource}: what sources
 * that shared nothing would read, the passthrough and vendor-vfio sources each listing the bus and reading every
 * function's {@code driver} link).
 *
 * <p>Each scan gets the kind of {@link Host} the daemon's scanner builds: a fresh scan scope (so the sources share
 * the reads they have in common) and a fresh memoizing view of the vGPU type resolver.
 *
 * <pre>
 * java -jar vgpu-benchmarks/target/benchmarks.jar SysfsScanBenchmark -f 1 -wi 3 -i 10 -w 1s -r 2s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class SysfsScanBenchmark {

    private static final List<DeviceSource> SOURCES =
            List.of(new PassthroughSource(), new MdevSource(), new VendorVfioSource());

    private Path root;
    private Host base;
    private FloorPlan floor;
    private FloorPlan floorPerSource;

    /** Writes the host and plans the floor; checks that a scan finds what the host holds. */
    @Setup
    public void setUp() throws IOException {
        root = Files.createTempDirectory("vgpu-large-host");
        LargeHost.write(root);
        base = Host.of(root);
        floor = FloorPlan.of(root, false);
        floorPerSource = FloorPlan.of(root, true);
        int found = scanAllSources();
        if (found != LargeHost.EXPECTED_DEVICES) {
            throw new IllegalStateException("scan found " + found + " devices, expected " + LargeHost.EXPECTED_DEVICES);
        }
        describe("floor", floor);
        describe("floorPerSource", floorPerSource);
    }

    private static void describe(String name, FloorPlan plan) {
        System.out.printf("%n%s: %d operations (%d reads, %d link reads, %d listings, %d stats)%n", name, plan.size(),
                plan.count(FloorPlan.Kind.READ), plan.count(FloorPlan.Kind.READ_LINK), plan.count(FloorPlan.Kind.LIST),
                plan.count(FloorPlan.Kind.IS_DIRECTORY) + plan.count(FloorPlan.Kind.EXISTS));
    }

    /** Deletes the host tree. */
    @TearDown
    public void tearDown() throws IOException {
        SysfsTree.deleteRecursively(root);
    }

    /**
     * Runs passthrough, mdev and vendor-vfio once each on one host made for this scan, as the daemon does; returns
     * the number of advertised devices.
     */
    @Benchmark
    public int scanAllSources() throws IOException {
        Host host = base.withVgpuTypes(VgpuTypeResolver.memoizing(LargeHost.resolver())).forScan();
        int devices = 0;
        for (DeviceSource source : SOURCES) {
            Discovery found = source.discover(host);
            devices += found.devices().size();
        }
        return devices;
    }

    /** Reads the same files and links, each once, with plain calls. */
    @Benchmark
    public long floor() throws IOException {
        return floor.run();
    }

    /** Reads what each of the three sources reads, one source after the other, with plain calls. */
    @Benchmark
    public long floorPerSource() throws IOException {
        return floorPerSource.run();
    }
}
