package dev.vgpu.attach;

import dev.vgpu.attach.internal.HostVfio;
import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.Host;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One handover's checks and answer ({@link Handovers}): PCI functions first (groups, cdevs, EGM), then mediated
 * devices. Reads every file it needs once: a group's member listing through the handover's scope, which the
 * sources' re-checks share. Confined to the calling thread; made per call.
 */
final class HandoverCheck {

    private static final Logger LOG = LoggerFactory.getLogger(HandoverCheck.class);
    private static final String CONTAINER = "/dev/vfio/vfio";

    private final HostVfio files;
    /** The host with this handover's scope, for the sources' re-checks and the group listings. */
    private final Host scoped;
    private final SourceRechecks rechecks;
    private final Snapshot snapshot;
    private final VfioNodes vfioNodes;
    private final Set<String> loggedWithoutCdev;
    /** Every node of the handover by path, in answer order. */
    private final Map<String, DeviceNode> nodes = new LinkedHashMap<>();

    HandoverCheck(HostVfio files, Host scoped, SourceRechecks rechecks, Snapshot snapshot, VfioNodes vfioNodes,
                  Set<String> loggedWithoutCdev) {
        this.files = files;
        this.scoped = scoped;
        this.rechecks = rechecks;
        this.snapshot = snapshot;
        this.vfioNodes = vfioNodes;
        this.loggedWithoutCdev = loggedWithoutCdev;
    }

    /** Why a handover is refused; carries no stack trace, as it is an answer, not a failure. */
    private static final class Refusal extends Exception {
        Refusal(String reason) {
            super(reason, null, false, false);
        }
    }

    Handover run(List<Device> devices) {
        List<Device> pci = new ArrayList<>();
        List<Device> mediated = new ArrayList<>();
        for (Device device : devices) {
            (device.attachment() == Attachment.MEDIATED ? mediated : pci).add(device);
        }
        Map<String, HandedDevice> handed = new LinkedHashMap<>();
        try {
            add(CONTAINER, DeviceNode.Kind.VFIO_CONTAINER);
            if (!pci.isEmpty()) {
                pciFunctions(pci, handed);
            }
            for (Device device : mediated) {
                handed.put(device.id(), mediatedDevice(device));
            }
        } catch (Refusal refusal) {
            return new Handover.Refused(refusal.getMessage());
        }
        List<HandedDevice> inOrder = devices.stream().map(d -> handed.get(d.id())).toList();
        return new Handover.Granted(inOrder, List.copyOf(nodes.values()), KubeVirtEnv.of(devices));
    }

    private void pciFunctions(List<Device> devices, Map<String, HandedDevice> handed) throws Refusal {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        Set<PciAddress> requested = new TreeSet<>();
        Set<String> functions = new TreeSet<>();
        // Advertised functions the VM gets (requested ones and their advertised group members), each checked once.
        Set<String> mustHaveCdev = new TreeSet<>();
        Map<String, Set<String>> functionsByGroup = new LinkedHashMap<>();
        for (Device device : devices) {
            Optional<String> known = device.iommuGroup().filter(HostVfio::isGroupName);
            if (known.isEmpty()) {
                throw new Refusal("device " + device.id() + " has no IOMMU group");
            }
            String group = known.get();
            requested.add(device.pciAddress().orElseThrow(() -> new Refusal("device " + device.id()
                    + " is not a PCI address")));
            verify(device, group, mustHaveCdev);
            Set<String> ofGroup = functionsByGroup.computeIfAbsent(group, g -> new TreeSet<>());
            List<String> listed = groups.computeIfAbsent(group, g -> HostVfio.groupFunctions(scoped, g));
            functions.addAll(listed);
            ofGroup.addAll(listed);
            for (Device member : snapshot.groupMembers(group)) {
                if (member.pciAddress().isPresent()) {
                    verify(member, group, mustHaveCdev);
                    ofGroup.add(member.id());
                }
            }
        }
        functions.addAll(mustHaveCdev);
        for (Map.Entry<String, List<String>> group : groups.entrySet()) {
            for (String function : group.getValue()) {
                if (!mustHaveCdev.contains(function)) {
                    verifyGroup(function, group.getKey());
                }
            }
        }
        Map<String, String> cdevs = vfioNodes == VfioNodes.IOMMUFD_WHEN_PRESENT && files.iommufd()
                ? cdevs(functions, mustHaveCdev) : Map.of();
        if (!cdevs.isEmpty()) {
            add("/dev/iommu", DeviceNode.Kind.IOMMUFD);
        }
        groups.keySet().forEach(group -> add("/dev/vfio/" + group, DeviceNode.Kind.VFIO_GROUP));
        cdevs.values().forEach(cdev -> add("/dev/vfio/devices/" + cdev, DeviceNode.Kind.VFIO_CDEV));
        for (HostVfio.EgmRegion egm : files.egmRegions()) {
            if (egm.gpus().stream().allMatch(g -> PciAddress.isValid(g) && requested.contains(PciAddress.parse(g)))) {
                add("/dev/" + egm.name(), DeviceNode.Kind.EGM);
            }
        }
        for (Device device : devices) {
            String group = device.iommuGroup().orElseThrow();
            List<DeviceNode> own = new ArrayList<>();
            own.add(nodes.get(CONTAINER));
            if (!cdevs.isEmpty()) {
                own.add(nodes.get("/dev/iommu"));
            }
            own.add(nodes.get("/dev/vfio/" + group));
            for (String function : functionsByGroup.get(group)) {
                String cdev = cdevs.get(function);
                if (cdev != null) {
                    own.add(nodes.get("/dev/vfio/devices/" + cdev));
                }
            }
            handed.put(device.id(), new HandedDevice(device, group, own));
        }
    }

    /**
     * The VFIO cdev of each of these functions that has one, in function order, for iommufd; empty (the legacy
     * group nodes only) when one the VM must get has none, which is logged once per such function.
     */
    private Map<String, String> cdevs(Set<String> functions, Set<String> mustHaveCdev) {
        Map<String, String> cdevs = new TreeMap<>();
        List<String> without = new ArrayList<>();
        for (String function : functions) {
            Optional<String> cdev = files.vfioCdev(function);
            if (cdev.isPresent()) {
                cdevs.put(function, cdev.get());
            } else if (mustHaveCdev.contains(function)) {
                without.add(function);
            }
        }
        for (String function : without) {
            if (loggedWithoutCdev.add(function)) {
                LOG.warn("Device {} has no VFIO device cdev under vfio-dev/ although /dev/iommu exists (a kernel"
                        + " without VFIO_DEVICE_CDEV?): handovers that include it get the legacy VFIO group nodes"
                        + " only", function);
            }
        }
        return without.isEmpty() ? cdevs : Map.of();
    }

    private HandedDevice mediatedDevice(Device device) throws Refusal {
        Optional<String> now = files.mdevIommuGroup(device.id()).filter(HostVfio::isGroupName);
        if (now.isEmpty()) {
            throw new Refusal("unknown device " + device.id() + ": the mediated device or its IOMMU group is gone");
        }
        String group = now.get();
        if (device.iommuGroup().isPresent() && !device.iommuGroup().get().equals(group)) {
            throw new Refusal("device " + device.id() + " moved from IOMMU group " + device.iommuGroup().get()
                    + " to " + group + " since discovery");
        }
        verifyIdentity(device);
        add("/dev/vfio/" + group, DeviceNode.Kind.VFIO_GROUP);
        return new HandedDevice(device, group, List.of(nodes.get(CONTAINER), nodes.get("/dev/vfio/" + group)));
    }

    /** Checks an advertised device once per handover: its group, then its identity. */
    private void verify(Device device, String group, Set<String> verified) throws Refusal {
        if (verified.add(device.id())) {
            verifyGroup(device.id(), group);
            verifyIdentity(device);
        }
    }

    /** Re-checks that a function is still in {@code group}. */
    private void verifyGroup(String bdf, String group) throws Refusal {
        Optional<String> now = files.pciIommuGroup(bdf);
        if (now.isEmpty()) {
            throw new Refusal("unknown device " + bdf + ": its iommu_group link is gone");
        }
        if (!now.get().equals(group)) {
            throw new Refusal("device " + bdf + " moved from IOMMU group " + group + " to " + now.get()
                    + " since discovery");
        }
    }

    /** Asks the device's source whether it is still what was advertised. */
    private void verifyIdentity(Device device) throws Refusal {
        DeviceCheck check = rechecks.recheck(device, scoped);
        if (!check.unchanged()) {
            throw new Refusal(check.describe(device.id()));
        }
    }

    private void add(String path, DeviceNode.Kind kind) {
        nodes.putIfAbsent(path, new DeviceNode(path, kind));
    }
}
