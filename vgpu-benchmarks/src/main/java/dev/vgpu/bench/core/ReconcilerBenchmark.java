package dev.vgpu.bench.core;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Discovery;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link Reconciler#plan} on a host of 2,000 devices in 100 resources (20 VFs each, across 250 physical GPUs)
 * where 1 % of the devices (20, one in each of 20 resources) changed NUMA node between two scans.
 *
 * <p>Baselines in the same run: the same snapshot compared with itself ({@code plan(a, a)}, which equality
 * short-cuts by identity), an equal snapshot built from fresh objects (what every real rescan produces), and
 * the cost of building one such snapshot. Run:
 * <pre>{@code
 * java -jar vgpu-benchmarks/target/benchmarks.jar ReconcilerBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ReconcilerBenchmark {

    static final int DEVICES = 2_000;
    static final int RESOURCES = 100;
    static final int CHANGED = DEVICES / 100;
    static final String SOURCE = "vendor-vfio";

    private Discovery scan;
    private Snapshot before;
    private Snapshot beforeRebuilt;
    private Snapshot onePercentChanged;

    /** Builds the snapshots once per trial. */
    @Setup(Level.Trial)
    public void setUp() {
        scan = discovery(false);
        before = build(scan);
        beforeRebuilt = build(discovery(false));
        onePercentChanged = build(discovery(true));
        Plan plan = Reconciler.plan(before, onePercentChanged);
        if (before.deviceCount() != DEVICES || before.resources().size() != RESOURCES
                || plan.changes().size() != CHANGED || !Reconciler.plan(before, beforeRebuilt).isEmpty()) {
            throw new IllegalStateException("benchmark data is not what it claims: " + before + ", " + plan);
        }
    }

    /** 20 of 2,000 devices changed: 20 updates out of 100 resources. */
    @Benchmark
    public Plan planOnePercentChanged() {
        return Reconciler.plan(before, onePercentChanged);
    }

    /** No change, the very same snapshot object on both sides. */
    @Benchmark
    public Plan planNoChangeSameSnapshot() {
        return Reconciler.plan(before, before);
    }

    /** No change, an equal snapshot made of other objects (as a rescan of an idle host builds). */
    @Benchmark
    public Plan planNoChangeRebuiltSnapshot() {
        return Reconciler.plan(before, beforeRebuilt);
    }

    /** For scale: building one 2,000-device snapshot from a finished scan (conflict checks, sorting, indexes). */
    @Benchmark
    public Snapshot buildSnapshot() {
        return build(scan);
    }

    static Snapshot build(Discovery discovery) {
        return Snapshot.builder().add(SOURCE, discovery).build();
    }

    /**
     * Device {@code i} is VF {@code i % 8} of the card on bus {@code i / 8}, in resource {@code i % 100}; with
     * {@code changed}, devices {@code 101 * k} (k = 0..19, one in each of resources 0..19) sit on the other
     * NUMA node.
     */
    static Discovery discovery(boolean changed) {
        Discovery.Builder discovery = Discovery.builder();
        for (int i = 0; i < DEVICES; i++) {
            int bus = i / 8;
            int numa = bus < 125 ? 0 : 1;
            if (changed && i % 101 == 0 && i / 101 < CHANGED) {
                numa = 1 - numa;
            }
            discovery.add(Device.builder(String.format(Locale.ROOT, "0000:%02x:01.%d", bus, i % 8),
                            new ResourceName(String.format(Locale.ROOT, "NVIDIA_PROFILE-%03dQ", i % RESOURCES)),
                            SOURCE, Attachment.VFIO_PCI)
                    .parent(new PciAddress(0, bus, 0, 0))
                    .iommuGroup(Integer.toString(100 + i))
                    .numaNode(numa)
                    .vfioCdev("vfio" + i)
                    .build());
        }
        return discovery.build();
    }
}
