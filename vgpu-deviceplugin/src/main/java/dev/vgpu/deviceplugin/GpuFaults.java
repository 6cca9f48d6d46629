package dev.vgpu.deviceplugin;

import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GPU faults reported by NVML (XIDs), their effect on the plugins, and their recovery after a quiet period.
 *
 * <p>A fault belongs to one physical GPU. It covers the GPU itself, the devices whose parent is the GPU or one of
 * its VFs, and, when every XID of it named a GPU instance, only the devices on those instances (a device whose source
 * knows no instance is covered whatever the instance: the safe side). A counted XID (re)starts the quiet period; when
 * it has passed, the {@link GpuProbe} is asked, outside the context, whether the GPU still answers: if it does, the
 * fault is cleared; if not, the fault stays and the probe is asked again after {@link #retryDelay}. Clearing a fault
 * clears only the XID flag of a device's health: a device whose group node is gone or whose identity changed stays
 * unhealthy for that.
 *
 * <p>Threads: owned by the manager's context (docs/ARCHITECTURE.md, "Threads and mutable state"); every method runs
 * there. The manager lists a GPU's VFs in sysfs outside the context, on its fault lane, in the order the marks were
 * made, and posts the marks here with the result. Timers are the context's ({@link SerialContext#schedule}), so a
 * test's scheduler is their clock; probes run on the fault lane and post their answer back.
 */
final class GpuFaults {

    private static final Logger LOG = LoggerFactory.getLogger(GpuFaults.class);
    /** The longest wait before a GPU that did not answer is asked again. */
    static final Duration LONGEST_RETRY = Duration.ofMinutes(1);

    /** One GPU's fault. Mutable, owned by the context. */
    private static final class Fault {
        /** The GPU's functions marked: itself and its VFs (an mdev's parent may be one of them). */
        final Set<PciAddress> functions = new TreeSet<>();
        /** GPU instances named by its XIDs; ignored when {@code whole}. */
        final Set<Integer> instances = new TreeSet<>();
        boolean whole;
        String reason = "";
        /** Counts the marks, so that a timer or probe answer of an earlier quiet period is recognised as stale. */
        long generation;
        Future<?> timer;
        /** Whether the probe's last answer was "does not answer" (logged once per fault, not once per retry). */
        boolean silent;

        boolean covers(Device device) {
            boolean onGpu = functions.stream().anyMatch(f -> AdvertisedDevices.belongsTo(device, f));
            return onGpu && (whole || device.gpuInstance().isEmpty()
                    || instances.contains(device.gpuInstance().getAsInt()));
        }
    }

    private final SerialContext context;
    private final Executor lane;
    private final GpuProbe probe;
    private final Supplier<Collection<ResourcePlugin>> plugins;
    private final Map<PciAddress, Fault> faults = new HashMap<>();
    private Duration quiet;

    /**
     * @param context the manager's context, which owns this and runs its timers
     * @param lane    where the probe is asked, outside the context
     * @param probe   whether a GPU still answers
     * @param quiet   how long after its last counted XID a GPU recovers; zero: never
     * @param plugins the plugins serving now (read in the context)
     */
    GpuFaults(SerialContext context, Executor lane, GpuProbe probe, Duration quiet,
              Supplier<Collection<ResourcePlugin>> plugins) {
        this.context = context;
        this.lane = lane;
        this.probe = probe;
        this.quiet = requireQuiet(quiet);
        this.plugins = plugins;
    }

    static Duration requireQuiet(Duration quiet) {
        if (quiet == null || quiet.isNegative()) {
            throw new IllegalArgumentException("GPU fault recovery period must be zero or positive, got " + quiet);
        }
        return quiet;
    }

    /** Whether a fault reported now covers the device. */
    boolean faulty(Device device) {
        if (faults.isEmpty()) {
            return false;
        }
        for (Fault fault : faults.values()) {
            if (fault.covers(device)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Marks the devices of the GPU (on its VFs {@code vfs} too; on {@code instance} only, when given) unhealthy, and
     * starts the GPU's quiet period again.
     */
    void markUnhealthy(PciAddress gpu, List<PciAddress> vfs, OptionalInt instance, String reason) {
        Fault fault = faults.computeIfAbsent(gpu, g -> new Fault());
        fault.functions.add(gpu);
        fault.functions.addAll(vfs);
        if (instance.isPresent()) {
            fault.instances.add(instance.getAsInt());
        } else {
            fault.whole = true;
        }
        fault.reason = reason == null || reason.isBlank() ? "a fault" : reason;
        fault.generation++;
        fault.silent = false;
        SortedSet<String> covered = applyToPlugins(fault);
        String scope = instance.isPresent() ? " in GPU instance " + instance.getAsInt() : "";
        LOG.warn("GPU {} reported {}{}: {} unhealthy; {}", gpu, fault.reason, scope,
                covered.isEmpty() ? "no advertised device on it is" : "devices " + String.join(", ", covered) + " are",
                quiet.isZero() ? "they stay so (no recovery period)" : "healthy again after "
                        + GoDurations.format(quiet) + " without another counted XID, if NVML answers for the GPU");
        arm(gpu, fault, quiet);
    }

    /** Clears the GPU's fault now (whatever its quiet period). */
    void markHealthy(PciAddress gpu) {
        Fault fault = faults.remove(gpu);
        if (fault == null) {
            return;
        }
        cancel(fault);
        SortedSet<String> freed = applyToPlugins(fault);
        LOG.info("GPU {} fault cleared: devices {} no longer carry it", gpu, freed);
    }

    /** A new quiet period for every fault, counted from now (a configuration reload); zero: none recovers. */
    void recoverAfter(Duration next) {
        requireQuiet(next);
        if (next.equals(quiet)) {
            return;
        }
        quiet = next;
        faults.forEach((gpu, fault) -> arm(gpu, fault, next));
        if (!faults.isEmpty()) {
            LOG.info("GPU fault recovery period is now {}: {} GPUs with a fault count it from now",
                    next.isZero() ? "none (faults stay)" : GoDurations.format(next), faults.size());
        }
    }

    /** Cancels every recovery timer (the manager closes): no task of this manager stays on its scheduler. */
    void close() {
        faults.values().forEach(GpuFaults::cancel);
        faults.clear();
    }

    /** The GPUs with a fault now, sorted (for tests and status). */
    SortedSet<PciAddress> faultyGpus() {
        return new TreeSet<>(faults.keySet());
    }

    /** How long to wait before asking a GPU that did not answer again: the quiet period, at most a minute. */
    Duration retryDelay() {
        return quiet.compareTo(LONGEST_RETRY) < 0 ? quiet : LONGEST_RETRY;
    }

    private void arm(PciAddress gpu, Fault fault, Duration after) {
        cancel(fault);
        if (after.isZero()) {
            return;
        }
        long generation = fault.generation;
        fault.timer = context.schedule(() -> due(gpu, generation), after.toNanos());
    }

    private static void cancel(Fault fault) {
        if (fault.timer != null) {
            fault.timer.cancel(false);
            fault.timer = null;
        }
    }

    /** In the context: the quiet period of one mark has passed; ask the probe outside. */
    private void due(PciAddress gpu, long generation) {
        Fault fault = faults.get(gpu);
        if (fault == null || fault.generation != generation) {
            return; // cleared, or a later XID started another quiet period
        }
        fault.timer = null;
        lane.execute(() -> {
            Optional<String> silence;
            try {
                silence = probe.check(gpu);
            } catch (RuntimeException e) {
                silence = Optional.of("the check failed: " + e);
            }
            Optional<String> answer = silence;
            context.execute(() -> probed(gpu, generation, answer));
        });
    }

    /** In the context: what the probe said about a GPU whose quiet period had passed. */
    private void probed(PciAddress gpu, long generation, Optional<String> silence) {
        Fault fault = faults.get(gpu);
        if (fault == null || fault.generation != generation) {
            return;
        }
        if (silence.isPresent()) {
            if (!fault.silent) {
                LOG.warn("GPU {} had no counted XID for {}, but NVML does not answer for it ({}): its devices stay"
                        + " unhealthy; asking again every {}", gpu, GoDurations.format(quiet), silence.get(),
                        GoDurations.format(retryDelay()));
            }
            fault.silent = true;
            if (!quiet.isZero()) {
                fault.timer = context.schedule(() -> due(gpu, generation), retryDelay().toNanos());
            }
            return;
        }
        faults.remove(gpu);
        SortedSet<String> freed = applyToPlugins(fault);
        LOG.info("GPU {} had no counted XID for {} since {} and NVML answers for it: devices {} are healthy again as"
                + " far as XIDs go", gpu, GoDurations.format(quiet), fault.reason, freed.isEmpty() ? "(none advertised)"
                : String.join(", ", freed));
    }

    /** Publishes every plugin's fault flags again; answers the devices {@code fault} covers, as "id (resource)". */
    private SortedSet<String> applyToPlugins(Fault fault) {
        SortedSet<String> covered = new TreeSet<>();
        for (ResourcePlugin plugin : plugins.get()) {
            for (Device device : plugin.advertised().devices()) {
                if (fault.covers(device)) {
                    covered.add(device.id() + " (" + plugin.name().fullName() + ")");
                }
            }
            plugin.gpuFaults(this::faulty);
        }
        return covered;
    }
}
