package dev.vgpu.attach;

import dev.vgpu.attach.internal.HostVfio;
import dev.vgpu.core.Device;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What handing devices to a VM takes on one host, checked against the host as it is now (docs/HOST-FACTS.md §3):
 * the one place that knows it, for every adapter. The device plugin's Allocate translates a {@link Handover} into
 * its protobuf answer; a DRA plugin makes its CDI spec and device metadata from the same answer.
 * <pre>{@code
 * Handovers handovers = Handovers.forHost(Host.of(Path.of("/")), DeviceSources.load().sources());
 * Handover answer = handovers.check(snapshot, resource, List.of("0000:41:00.0"), VfioNodes.IOMMUFD_WHEN_PRESENT);
 * }</pre>
 *
 * <p>Checks, before anything is answered: every device is advertised (by the resource, when one is named); each
 * PCI function, every advertised device sharing its IOMMU group and every other function the group lists is still
 * in that group; an mdev's group is still its own; and each advertised device's source says it is still what was
 * advertised ({@link DeviceSource#recheck}: a VF's vGPU type, an mdev's type, a GPU's vendor and device id and its
 * group's viability). A source this instance was not given is trusted; one whose re-check throws or answers nothing
 * refuses the device. Then the nodes: {@code /dev/vfio/vfio}; each group's node; with
 * {@link VfioNodes#IOMMUFD_WHEN_PRESENT} and {@code <host-root>/dev/iommu} present, {@code /dev/iommu} and the cdev
 * of every function of each PCI group, unless a function the VM must get has no cdev (a kernel without
 * {@code VFIO_DEVICE_CDEV}: then the legacy nodes only, logged once per function); {@code /dev/egmN} when every GPU
 * its {@code gpu_devices} lists is handed over.
 *
 * <p>Paths in answers are the host's real paths, never prefixed by the host root, which is only where the checks
 * read. Thread-safe: the only state is the set of functions already logged for a missing cdev.
 */
public final class Handovers {

    private final Host host;
    private final HostVfio files;
    private final SourceRechecks rechecks;
    /** Functions whose missing cdev was logged; bounded by the functions ever handed over. */
    private final Set<String> loggedWithoutCdev = ConcurrentHashMap.newKeySet();

    private Handovers(Host host, Collection<? extends DeviceSource> sources) {
        this.host = host;
        this.files = new HostVfio(host);
        this.rechecks = new SourceRechecks(host, sources);
    }

    /**
     * Handovers on {@code host}, re-checking identities with the sources that found the devices.
     *
     * @param host    the host the devices were found on; its root is where every check reads
     * @param sources the sources of the snapshots that will be asked about, matched by {@link DeviceSource#name()}
     */
    public static Handovers forHost(Host host, Collection<? extends DeviceSource> sources) {
        return new Handovers(host, List.copyOf(sources));
    }

    /**
     * Checks the devices that {@code resource} advertises under these ids (duplicates count once, the first
     * occurrence keeps its place) and answers what the VM needs for them.
     *
     * @return {@link Handover.Refused} naming the first id that is not advertised by {@code resource}, or as
     *         {@link #check(Snapshot, List, VfioNodes)}
     */
    public Handover check(Snapshot snapshot, ResourceName resource, List<String> ids, VfioNodes nodes) {
        if (ids.isEmpty()) {
            return new Handover.Refused("container request for " + resource + " lists no devices");
        }
        Optional<Resource> advertised = snapshot.resource(resource);
        List<Device> devices = new ArrayList<>();
        for (String id : new LinkedHashSet<>(ids)) {
            Optional<Device> device = advertised.flatMap(r -> find(r, id));
            if (device.isEmpty()) {
                return new Handover.Refused("unknown device " + Printable.of(id) + ": not advertised by "
                        + resource);
            }
            devices.add(device.get());
        }
        return check(snapshot, devices, nodes);
    }

    /**
     * Checks devices of {@code snapshot} and answers what the VM needs for them.
     *
     * @param snapshot the snapshot the devices come from (it tells which devices share their IOMMU groups)
     * @param devices  the devices, in the order the VM should see them; duplicates count once
     * @return {@link Handover.Granted}, or {@link Handover.Refused} naming the first device that has no IOMMU group,
     *         moved to another one, is gone, or is no longer what was advertised
     */
    public Handover check(Snapshot snapshot, List<Device> devices, VfioNodes nodes) {
        if (devices.isEmpty()) {
            return new Handover.Refused("no devices to hand over");
        }
        // One scope per handover: a file that the sources' re-checks and the checks here both need is read once.
        return new HandoverCheck(files, host.forScan(), rechecks, snapshot, nodes, loggedWithoutCdev)
                .run(List.copyOf(new LinkedHashSet<>(devices)));
    }

    /**
     * Whether a device is still what its source advertised, as the checks above ask; for health checks. Never
     * throws (but for a JVM error).
     */
    public DeviceCheck recheck(Device device) {
        return rechecks.recheck(device);
    }

    /** Whether {@code /dev/vfio/<group>} exists under the host root; false for a name no kernel makes. */
    public boolean groupNodePresent(String group) {
        return files.groupNodePresent(group);
    }

    private static Optional<Device> find(Resource resource, String id) {
        return resource.devices().stream().filter(d -> d.id().equals(id)).findFirst();
    }
}
