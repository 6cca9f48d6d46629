package dev.vgpu.bench.e2e;

import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Scanner;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Rescan rounds as the daemon's loop runs them (every source found by {@code ServiceLoader}, scan against the
 * previous snapshot, plan the difference), on a thread named {@code vgpu-rescan}, in a JVM launched with the
 * manifest's flags. Prints one line: {@code scans=N wall_min_ns= wall_median_ns= thread_cpu_ns= process_cpu_ns=
 * alloc_bytes= gcs= devices=} (per scan where it says so; {@code gcs} over all measured scans).
 */
public final class RescanCost {

    private RescanCost() {
    }

    /**
     * Measures.
     *
     * @param args host root, warm-up scans, measured scans
     * @throws Exception when the thread fails
     */
    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int warmup = Integer.parseInt(args[1]);
        int scans = Integer.parseInt(args[2]);
        StringBuilder out = new StringBuilder();
        Thread loop = new Thread(() -> out.append(measure(root, warmup, scans)), "vgpu-rescan");
        loop.start();
        loop.join();
        System.out.println(out);
    }

    private static String measure(Path root, int warmup, int scans) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Scanner scanner = Scanner.of(root, DeviceSources.load());
        Snapshot current = Snapshot.empty();
        for (int i = 0; i < warmup; i++) {
            current = round(scanner, current);
        }
        long[] wall = new long[scans];
        long gcs = gcCount();
        long cpu = threads.getCurrentThreadCpuTime();
        long processCpu = os.getProcessCpuTime();
        long allocated = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < scans; i++) {
            long started = System.nanoTime();
            current = round(scanner, current);
            wall[i] = System.nanoTime() - started;
        }
        allocated = threads.getCurrentThreadAllocatedBytes() - allocated;
        processCpu = os.getProcessCpuTime() - processCpu;
        cpu = threads.getCurrentThreadCpuTime() - cpu;
        gcs = gcCount() - gcs;
        Arrays.sort(wall);
        return "scans=" + scans + " wall_min_ns=" + wall[0] + " wall_median_ns=" + wall[scans / 2]
                + " thread_cpu_ns=" + cpu / scans + " process_cpu_ns=" + processCpu / scans
                + " alloc_bytes=" + allocated / scans + " gcs=" + gcs + " devices=" + current.deviceCount();
    }

    private static Snapshot round(Scanner scanner, Snapshot current) {
        Snapshot next = scanner.run(current).snapshot();
        Reconciler.plan(current, next);
        return next;
    }

    private static long gcCount() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream().mapToLong(GarbageCollectorMXBean::getCollectionCount)
                .sum();
    }
}
