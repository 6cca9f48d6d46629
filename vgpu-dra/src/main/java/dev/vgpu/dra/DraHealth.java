package dev.vgpu.dra;

import dev.vgpu.attach.DeviceHealth;
import dev.vgpu.attach.GpuFaults;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Threads;
import dev.vgpu.core.spi.DeviceCheck;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which devices are unhealthy in DRA mode, for the next ResourceSlices ({@link SlicePublisher#health}) and the
 * kubelet's health stream ({@link DraPlugin#health}): the same
 * signals as the device plugin's health, from the same places: a device's {@code /dev/vfio/<group>} gone or its
 * identity changed ({@link Handovers#groupNodePresent}, {@link Handovers#recheck}, asked every
 * {@link #CHECK_EVERY} and after every new snapshot), and the XIDs NVML reports, with the device plugin's policy
 * ({@link GpuFaults}: a GPU's VFs and mdevs, GPU-instance scoping, recovery after {@code health.xid.recoverAfter}).
 * One log line per device whose health changes, saying every reason that holds, in the device plugin's words
 * ({@link DeviceHealth#why}).
 *
 * <p>Threads: one thread ({@code vgpu-dra-health}) owns everything below the configuration: the snapshot, what the
 * last check found, the GPU faults and their timers, and it alone reads the host for the checks and the VF listing
 * of a faulty GPU; {@link #apply}, {@link #markGpuUnhealthy} and {@link #recoverAfter} only post to it. The NVML probe
 * of a recovering GPU runs on it too (a short native call). The set of unhealthy ids goes to {@code unhealthy} from
 * that thread (each id with why), only when the set or a reason changed.
 */
public final class DraHealth implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DraHealth.class);
    /** As often as the device plugin's health check. */
    static final Duration CHECK_EVERY = Duration.ofSeconds(5);

    private final Handovers handovers;
    private final Path hostRoot;
    private final Consumer<Map<String, String>> unhealthy;
    private final ScheduledExecutorService thread;
    private final GpuFaults faults;

    // Owned by `thread`.
    /**
     * The devices to check; null until the first {@link #apply}. No verdict is told before that: an empty one from a
     * timer that fired before a slow first scan would clear a restarted publisher's kept taints and make the health
     * stream call every device healthy before it was checked.
     */
    private Snapshot snapshot;
    /** Device id to what its last check found (its group node and identity; no GPU fault); only the snapshot's. */
    private Map<String, DeviceHealth> checked = Map.of();
    /** Device id to the reason it was last reported unhealthy for, as published. */
    private Map<String, String> reported = Map.of();
    /** The verdicts last told to {@code unhealthy} (id → why); written by the thread, read by any (metrics). */
    private volatile Map<String, String> published;

    /**
     * @param handovers the host's checks (the same as Prepare's)
     * @param hostRoot  where a faulty GPU's VFs are listed
     * @param probe     whether a GPU still answers (NVML), asked before an XID fault recovers
     * @param quiet     {@code health.xid.recoverAfter}; zero = never
     * @param unhealthy told every unhealthy device's id and why (in words) whenever that changes
     */
    public DraHealth(Handovers handovers, Path hostRoot, GpuFaults.Probe probe, Duration quiet,
              Consumer<Map<String, String>> unhealthy) {
        this.handovers = Objects.requireNonNull(handovers, "handovers");
        this.hostRoot = Objects.requireNonNull(hostRoot, "hostRoot");
        this.unhealthy = Objects.requireNonNull(unhealthy, "unhealthy");
        this.thread = Threads.owner(Threads.daemon("vgpu-dra-health"));
        GpuFaults.Context context = new GpuFaults.Context() {
            @Override
            public void execute(Runnable task) {
                post(task);
            }

            @Override
            public Future<?> schedule(Runnable task, long delayNanos) {
                try {
                    return thread.schedule(() -> guarded(task), delayNanos, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    return java.util.concurrent.CompletableFuture.completedFuture(null); // closing
                }
            }
        };
        this.faults = new GpuFaults(context, context, probe, quiet, this::devices, this::publish);
    }

    /** Starts the periodic check. */
    public DraHealth start() {
        long every = CHECK_EVERY.toMillis();
        thread.scheduleWithFixedDelay(() -> guarded(this::check), every, every, TimeUnit.MILLISECONDS);
        return this;
    }

    /** Checks the devices of {@code next} from now on (any thread; returns at once). */
    public void apply(Snapshot next) {
        Objects.requireNonNull(next, "next");
        post(() -> {
            snapshot = next;
            check();
        });
    }

    /** An XID fault of {@code gpu} (of one GPU instance only, when given), as the device plugin's (any thread). */
    public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        post(() -> faults.markUnhealthy(gpu, GpuFaults.virtualFunctions(hostRoot, gpu), gpuInstance, reason));
    }

    /** A new XID recovery period from now (a configuration reload; any thread). */
    public void recoverAfter(Duration quiet) {
        GpuFaults.requireQuiet(quiet);
        post(() -> faults.recoverAfter(quiet));
    }

    /** Waits until everything posted before has run (tests). */
    void awaitIdle() throws InterruptedException {
        try {
            thread.submit(() -> { }).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Checks now (tests; the timer does it in production). */
    void checkNow() {
        post(this::check);
    }

    private void post(Runnable task) {
        try {
            thread.execute(() -> guarded(task));
        } catch (RejectedExecutionException e) {
            LOG.debug("DRA health checks stopped; dropping a task");
        }
    }

    private static void guarded(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.error("A DRA health task failed: {}", e.toString(), e);
        }
    }

    private Collection<Device> devices() {
        if (snapshot == null) {
            return List.of();
        }
        return snapshot.resources().values().stream().flatMap(r -> r.devices().stream()).toList();
    }

    /** On the thread: reads the host for every device, then publishes (nothing before the first snapshot). */
    private void check() {
        if (snapshot == null) {
            return;
        }
        Map<String, DeviceHealth> next = new TreeMap<>();
        Map<String, Boolean> groups = new TreeMap<>();
        for (Device device : devices()) {
            boolean present = device.iommuGroup().map(g -> groups.computeIfAbsent(g, handovers::groupNodePresent))
                    .orElse(true);
            DeviceCheck now = handovers.recheck(device);
            next.put(device.id(), new DeviceHealth(present, false, now.unchanged() ? "" : now.describe(device.id())));
        }
        checked = next;
        publish();
    }

    /** On the thread: the unhealthy set from the last check and the GPU faults; logged and told when it changed. */
    private void publish() {
        if (snapshot == null) {
            return; // an XID before the first snapshot: told with the first check, which asks the faults again
        }
        Map<String, String> now = new TreeMap<>();
        for (Device device : devices()) {
            DeviceHealth health = checked.getOrDefault(device.id(), DeviceHealth.HEALTHY)
                    .withGpuFault(faults.faulty(device));
            if (!health.healthy()) {
                now.put(device.id(), health.why(device.iommuGroup()));
            }
        }
        for (Map.Entry<String, String> e : now.entrySet()) {
            if (!e.getValue().equals(reported.get(e.getKey()))) {
                LOG.warn("DRA device {} is unhealthy: {}; its ResourceSlice entry gets the NoSchedule taint",
                        e.getKey(), e.getValue());
            }
        }
        for (String id : reported.keySet()) {
            if (!now.containsKey(id) && checked.containsKey(id)) {
                LOG.info("DRA device {} is healthy again (was: {}); its taint is removed", id, reported.get(id));
            }
        }
        reported = now;
        if (!now.equals(published)) {
            Map<String, String> verdicts = Map.copyOf(now);
            published = verdicts;
            unhealthy.accept(verdicts);
        }
    }

    @Override
    public void close() {
        post(faults::close);
        Threads.stop(thread, Duration.ofSeconds(5));
    }

    /** Ids that are unhealthy now, sorted (for {@code vgpu_devices}); any thread, may be a round old. */
    public List<String> unhealthyIds() {
        Map<String, String> now = published;
        return now == null ? List.of() : now.keySet().stream().sorted().toList();
    }
}
