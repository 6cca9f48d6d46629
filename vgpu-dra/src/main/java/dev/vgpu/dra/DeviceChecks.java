package dev.vgpu.dra;

import dev.vgpu.attach.DeviceHealth;
import dev.vgpu.attach.GpuFaults;
import dev.vgpu.attach.Handovers;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.SerialContext;
import dev.vgpu.core.spi.DeviceCheck;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which devices are unhealthy in DRA mode, with the device plugin's signals and rules: a device's
 * {@code /dev/vfio/<group>} gone or its identity changed ({@link Handovers#groupNodePresent},
 * {@link Handovers#recheck}: read on the check lane, every check period and after every new snapshot), and the XIDs
 * NVML reports, with the device plugin's policy ({@link GpuFaults}: a GPU's VFs and mdevs, GPU-instance scoping,
 * recovery after a quiet period). One log line per device whose health changes, saying every reason that holds, in
 * the device plugin's words ({@link DeviceHealth#why}).
 *
 * <p>Threads: owned by the plugin's serial context: the last readings, the faults and their timers, the verdicts.
 * Host reads run on the check lane (one round at a time; a round asked for meanwhile runs after it) and a faulty
 * GPU's VF listing on the fault lane; both post back. No verdict exists before the first round after the first
 * snapshot: a restarted plugin must not call a faulty device healthy before it checked it.
 */
final class DeviceChecks {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceChecks.class);

    private final SerialContext owner;
    private final SerialContext checkLane;
    private final SerialContext faultLane;
    private final Handovers handovers;
    private final Path hostRoot;
    private final Supplier<Snapshot> snapshot;
    private final Runnable changed;
    private final GpuFaults faults;

    // Owner context only.
    /** Device id to what its last reading found (group node, identity; no GPU fault); only the snapshot's. */
    private Map<String, DeviceHealth> readings = Map.of();
    /** Whether a round has come back since the first snapshot. */
    private boolean read;
    private boolean reading;
    private boolean readAgain;
    /** Told when the next round that starts has come back (tests: a round asked for is done). */
    private final java.util.List<Runnable> afterNextRound = new java.util.ArrayList<>();
    private final java.util.List<Runnable> afterThisRound = new java.util.ArrayList<>();
    /** Each unhealthy device's id with why, as last published; empty before the first round. */
    private Optional<Map<String, String>> verdicts = Optional.empty();

    /**
     * @param snapshot the owner's snapshot, null before the first (read in the context)
     * @param changed  told in the context when the verdicts change
     */
    DeviceChecks(SerialContext owner, SerialContext checkLane, SerialContext faultLane, Handovers handovers,
                 Path hostRoot, GpuFaults.Probe probe, Duration quiet, Supplier<Snapshot> snapshot, Runnable changed) {
        this.owner = owner;
        this.checkLane = checkLane;
        this.faultLane = faultLane;
        this.handovers = handovers;
        this.hostRoot = hostRoot;
        this.snapshot = snapshot;
        this.changed = changed;
        this.faults = new GpuFaults(owner::schedule, faultLane, probe, quiet, this::devices, this::publish);
    }

    /** The verdicts now: each unhealthy device's id with why; empty before the first check. In the context. */
    Optional<Map<String, String>> verdicts() {
        return verdicts;
    }

    /** Reads the host for every device of the snapshot soon; {@code done} is told once such a round is back. */
    void check(Runnable done) {
        afterNextRound.add(done);
        check();
    }

    /** Reads the host for every device of the snapshot soon. In the context. */
    void check() {
        if (snapshot.get() == null) {
            afterNextRound.forEach(Runnable::run);
            afterNextRound.clear();
            return;
        }
        if (reading) {
            readAgain = true;
            return;
        }
        reading = true;
        afterThisRound.addAll(afterNextRound);
        afterNextRound.clear();
        Snapshot devices = snapshot.get();
        checkLane.execute(() -> {
            Map<String, DeviceHealth> found = null;
            try {
                found = read(devices);
            } finally {
                Map<String, DeviceHealth> result = found;
                owner.execute(() -> readBack(devices, result));
            }
        });
    }

    /** An XID fault of {@code gpu} (of one GPU instance only, when given). Any thread: lists its VFs on the lane. */
    void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
        faultLane.execute(() -> {
            List<PciAddress> vfs = GpuFaults.virtualFunctions(hostRoot, gpu);
            owner.execute(() -> faults.markUnhealthy(gpu, vfs, gpuInstance, reason));
        });
    }

    /** Runs {@code then} in the context once every fault marked before has reached it. Any thread. */
    void afterMarks(Runnable then) {
        faultLane.execute(() -> owner.execute(then));
    }

    /** A new XID recovery period from now. In the context. */
    void recoverAfter(Duration quiet) {
        faults.recoverAfter(quiet);
    }

    /** Stops the fault timers. In the context. */
    void close() {
        faults.close();
    }

    /** On the check lane: each device's group node and identity. */
    private Map<String, DeviceHealth> read(Snapshot devices) {
        Map<String, DeviceHealth> found = new TreeMap<>();
        Map<String, Boolean> groups = new TreeMap<>();
        for (Device device : all(devices)) {
            boolean present = device.iommuGroup().map(g -> groups.computeIfAbsent(g, handovers::groupNodePresent))
                    .orElse(true);
            DeviceCheck now = handovers.recheck(device);
            found.put(device.id(), new DeviceHealth(present, false, now.unchanged() ? ""
                    : now.describe(device.id())));
        }
        return found;
    }

    private void readBack(Snapshot devices, Map<String, DeviceHealth> found) {
        reading = false;
        if (found != null && devices == snapshot.get()) {
            readings = found;
            read = true;
            publish();
        }
        if (readAgain || (found != null && devices != snapshot.get())) {
            readAgain = false;
            check();
        } else {
            afterThisRound.forEach(Runnable::run);
            afterThisRound.clear();
        }
    }

    private Collection<Device> devices() {
        Snapshot now = snapshot.get();
        return now == null ? List.of() : all(now);
    }

    private static List<Device> all(Snapshot snapshot) {
        return snapshot.resources().values().stream().flatMap(r -> r.devices().stream()).toList();
    }

    /** In the context: the verdicts from the last readings and the GPU faults; logged and told when they changed. */
    private void publish() {
        if (!read) {
            return; // an XID before the first round: told with that round, which asks the faults again
        }
        Map<String, String> now = new TreeMap<>();
        for (Device device : devices()) {
            DeviceHealth health = readings.getOrDefault(device.id(), DeviceHealth.HEALTHY)
                    .withGpuFault(faults.faulty(device));
            if (!health.healthy()) {
                now.put(device.id(), health.why(device.iommuGroup()));
            }
        }
        Map<String, String> before = verdicts.orElse(Map.of());
        now.forEach((id, why) -> {
            if (!why.equals(before.get(id))) {
                LOG.warn("DRA device {} is unhealthy: {}; its ResourceSlice entry gets the NoSchedule taint", id, why);
            }
        });
        before.forEach((id, why) -> {
            if (!now.containsKey(id) && readings.containsKey(id)) {
                LOG.info("DRA device {} is healthy again (was: {}); its taint is removed", id, why);
            }
        });
        if (verdicts.isEmpty() || !now.equals(before)) {
            verdicts = Optional.of(Map.copyOf(now));
            changed.run();
        }
    }
}
