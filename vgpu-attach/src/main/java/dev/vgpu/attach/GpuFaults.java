package dev.vgpu.attach;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.HostFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GPU faults an adapter was told of (NVML XIDs), which devices they cover, and their recovery after a quiet
 * period: the one XID health policy of the device plugin and the DRA plugin (docs/ARCHITECTURE.md, "Where an XID
 * makes a device unhealthy").
 *
 * <p>A fault belongs to one physical GPU. It covers the GPU itself, the devices whose parent is the GPU or one of its
 * VFs, and, when every XID of it named a GPU instance, only the devices on those instances (a device whose source
 * knows no instance is covered whatever the instance: the safe side). A counted XID (re)starts the quiet period; when
 * it has passed, the {@link Probe} is asked, on the lane, whether the GPU still answers: if it does, the fault is
 * cleared; if not, it stays and the probe is asked again after the quiet period, at most a minute later. A quiet period of zero means
 * faults never recover by themselves.
 * <pre>{@code
 * GpuFaults faults = new GpuFaults(context, lane, nvml::checkGpu, Duration.ofMinutes(5), this::advertised,
 *         this::republish);
 * faults.markUnhealthy(gpu, GpuFaults.virtualFunctions(hostRoot, gpu), OptionalInt.empty(), "critical XID 79");
 * }</pre>
 *
 * <p>Threads: owned by one serial context of the adapter; every method but the static ones runs there, and so do
 * the timers ({@link Context#schedule}) and the probe's answers. {@code advertised} and {@code changed} are called in
 * the context; the probe runs on {@code lane}, outside it, and posts its answer back.
 */
public final class GpuFaults {

    private static final Logger LOG = LoggerFactory.getLogger(GpuFaults.class);
    /** The longest wait before a GPU that did not answer is asked again. */
    static final Duration LONGEST_RETRY = Duration.ofMinutes(1);
    private static final Pattern VIRTFN = Pattern.compile("virtfn[0-9]{1,5}");

    /**
     * The serial context that owns the faults: runs posted tasks one at a time, in order, now or later. One method,
     * so that an adapter's serial context passes its {@code schedule} (docs/ARCHITECTURE.md, "Threads and mutable
     * state"): {@code new GpuFaults(context::schedule, lane, ...)}.
     */
    @FunctionalInterface
    public interface Context extends Executor {
        /** Runs {@code task} in the context after {@code delayNanos}; cancelling the answer keeps it from running. */
        Future<?> schedule(Runnable task, long delayNanos);

        /** Runs {@code task} in the context after what was posted before it: a schedule without delay. */
        @Override
        default void execute(Runnable task) {
            schedule(task, 0);
        }
    }

    /** Whether a physical GPU still answers its driver (NVML); may block briefly. */
    @FunctionalInterface
    public interface Probe {
        /** Trusts every GPU: recovery needs only the quiet period. */
        Probe TRUSTING = gpu -> Optional.empty();

        /** Empty when the GPU answers; otherwise why not, in words. */
        Optional<String> check(PciAddress gpu);
    }

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
            boolean onGpu = functions.stream().anyMatch(f -> belongsTo(device, f));
            return onGpu && (whole || device.gpuInstance().isEmpty()
                    || instances.contains(device.gpuInstance().getAsInt()));
        }
    }

    private final Context context;
    private final Executor lane;
    private final Probe probe;
    private final Supplier<? extends Collection<Device>> advertised;
    private final Runnable changed;
    private final Map<PciAddress, Fault> faults = new HashMap<>();
    private Duration quiet;

    /**
     * @param context    the adapter's context, which owns this and runs its timers
     * @param lane       where the probe is asked, outside the context
     * @param probe      whether a GPU still answers
     * @param quiet      how long after its last counted XID a GPU recovers; zero: never
     * @param advertised the devices served now, to name those a change covers in the log
     * @param changed    told after every change of the faults, to apply {@link #faulty} again
     */
    public GpuFaults(Context context, Executor lane, Probe probe, Duration quiet,
                     Supplier<? extends Collection<Device>> advertised, Runnable changed) {
        this.context = Objects.requireNonNull(context, "context");
        this.lane = Objects.requireNonNull(lane, "lane");
        this.probe = Objects.requireNonNull(probe, "probe");
        this.quiet = requireQuiet(quiet);
        this.advertised = Objects.requireNonNull(advertised, "advertised");
        this.changed = Objects.requireNonNull(changed, "changed");
    }

    /**
     * Checks a recovery period.
     *
     * @throws IllegalArgumentException when it is null or negative
     */
    public static Duration requireQuiet(Duration quiet) {
        if (quiet == null || quiet.isNegative()) {
            throw new IllegalArgumentException("GPU fault recovery period must be zero or positive, got " + quiet);
        }
        return quiet;
    }

    /** Whether the device is the function {@code gpu} or a device on it (its parent is {@code gpu}). */
    private static boolean belongsTo(Device device, PciAddress gpu) {
        return device.parent().map(gpu::equals).orElse(false)
                || device.pciAddress().map(gpu::equals).orElse(false);
    }

    /**
     * {@link #virtualFunctions(Host, PciAddress)} under {@code hostRoot}, read through {@code java.io}/NIO (a caller
     * that holds the daemon's {@link Host} gives that instead, and its reader).
     */
    public static List<PciAddress> virtualFunctions(Path hostRoot, PciAddress pf) {
        return virtualFunctions(Host.of(hostRoot, HostFiles.nio()), pf);
    }

    /**
     * The VFs a PF links with {@code virtfnN} under {@code sys/bus/pci/devices/<pf>} of the host, sorted; empty for a
     * function without VFs or when unreadable. Reads sysfs: call it outside the context.
     */
    public static List<PciAddress> virtualFunctions(Host host, PciAddress pf) {
        Path dir = host.path("sys/bus/pci/devices").resolve(pf.toString());
        HostFiles files = host.files();
        List<PciAddress> out = new ArrayList<>();
        try {
            for (String name : files.list(dir, host.scanScope())) {
                if (VIRTFN.matcher(name).matches()) {
                    vf(host, dir, name).ifPresent(out::add);
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }

    /** The VF one {@code virtfnN} link names (only its last path component); empty when unreadable or no BDF. */
    private static Optional<PciAddress> vf(Host host, Path dir, String link) {
        try {
            String name = host.files().linkName(dir, link, host.scanScope());
            return PciAddress.isValid(name) ? Optional.of(PciAddress.parse(name)) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Whether a fault reported now covers the device. */
    public boolean faulty(Device device) {
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
    public void markUnhealthy(PciAddress gpu, List<PciAddress> vfs, OptionalInt instance, String reason) {
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
        SortedSet<String> covered = apply(fault);
        String scope = instance.isPresent() ? " in GPU instance " + instance.getAsInt() : "";
        LOG.warn("GPU {} reported {}{}: {} unhealthy; {}", gpu, fault.reason, scope,
                covered.isEmpty() ? "no advertised device on it is" : "devices " + String.join(", ", covered) + " are",
                quiet.isZero() ? "they stay so (no recovery period)" : "healthy again after "
                        + GoDurations.format(quiet) + " without another counted XID, if NVML answers for the GPU");
        arm(gpu, fault, quiet);
    }

    /** Clears the GPU's fault now (whatever its quiet period). */
    public void markHealthy(PciAddress gpu) {
        Fault fault = faults.remove(gpu);
        if (fault == null) {
            return;
        }
        cancel(fault);
        SortedSet<String> freed = apply(fault);
        LOG.info("GPU {} fault cleared: devices {} no longer carry it", gpu, freed);
    }

    /** A new quiet period for every fault, counted from now (a configuration reload); zero: none recovers. */
    public void recoverAfter(Duration next) {
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

    /** Cancels every recovery timer (the adapter closes): no task of these faults stays scheduled. */
    public void close() {
        faults.values().forEach(GpuFaults::cancel);
        faults.clear();
    }

    /** The GPUs with a fault now, sorted. */
    public SortedSet<PciAddress> faultyGpus() {
        return new TreeSet<>(faults.keySet());
    }

    /** How long to wait before asking a GPU that did not answer again: the quiet period, at most a minute. */
    private Duration retryDelay() {
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
        SortedSet<String> freed = apply(fault);
        LOG.info("GPU {} had no counted XID for {} since {} and NVML answers for it: devices {} are healthy again as"
                + " far as XIDs go", gpu, GoDurations.format(quiet), fault.reason, freed.isEmpty() ? "(none advertised)"
                : String.join(", ", freed));
    }

    /** Tells the adapter the faults changed; answers the devices {@code fault} covers, as "id (resource)". */
    private SortedSet<String> apply(Fault fault) {
        SortedSet<String> covered = new TreeSet<>();
        for (Device device : advertised.get()) {
            if (fault.covers(device)) {
                covered.add(device.id() + " (" + device.resource().fullName() + ")");
            }
        }
        changed.run();
        return covered;
    }
}
