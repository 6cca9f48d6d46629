package dev.vgpu.deviceplugin;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Printable;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.deviceplugin.v1beta1.AllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.AllocateResponse;
import dev.vgpu.deviceplugin.v1beta1.ContainerAllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.ContainerAllocateResponse;
import dev.vgpu.deviceplugin.v1beta1.DeviceSpec;
import dev.vgpu.core.spi.DeviceCheck;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds Allocate answers as KubeVirt reads them (docs/HOST-FACTS.md §3), after re-checking every device.
 *
 * <p>VFIO PCI devices (passthrough, vendor-VFIO VFs): env {@code PCI_RESOURCE_…} with the requested BDFs;
 * {@code /dev/vfio/vfio}, each group node, and with iommufd {@code /dev/iommu} plus the {@code vfioN} cdev of
 * every function in the group; {@code /dev/egmN} when all of that region's GPUs are requested. Mediated devices:
 * env {@code MDEV_PCI_RESOURCE_…} with the UUIDs, {@code /dev/vfio/vfio} and each mdev's group node.
 *
 * <p>Re-checks: every requested device (and every advertised device sharing its IOMMU group) must still be in its
 * group, and its source must say it is still what was advertised ({@link Rechecks}: a VF still has its vGPU type,
 * an mdev its type, a GPU its vendor and device id); otherwise the request is refused. When {@code /dev/iommu}
 * exists but a function the VM would get has no VFIO cdev (a kernel without {@code VFIO_DEVICE_CDEV}), that
 * container gets the legacy nodes only ({@code /dev/vfio/vfio} and the group nodes), logged once per device.
 * DeviceSpec paths are the real host paths (host path = container path, {@code mrw}), never prefixed by the host
 * root, which is only where the checks read. Thread-safe: the only state is the set of devices already logged.
 */
final class AllocateResponses {

    private static final Logger LOG = LoggerFactory.getLogger(AllocateResponses.class);
    private static final String PERMISSIONS = "mrw";

    private final HostFiles files;
    private final Rechecks rechecks;
    /** Devices whose missing cdev was logged; bounded by the devices ever advertised. */
    private final Set<String> loggedWithoutCdev = ConcurrentHashMap.newKeySet();

    AllocateResponses(HostFiles files, Rechecks rechecks) {
        this.files = files;
        this.rechecks = rechecks;
    }

    /**
     * One response per container request, in order.
     *
     * @param name     the plugin's resource
     * @param snapshot the snapshot current at the call
     * @throws StatusException {@code INVALID_ARGUMENT} naming the limit a request is over ({@link RequestLimits},
     *                         checked before anything else), or the device that is unknown, not advertised by
     *                         {@code name}, moved to another IOMMU group, or no longer what was advertised
     */
    AllocateResponse allocate(ResourceName name, Snapshot snapshot, AllocateRequest request) throws StatusException {
        RequestLimits.check(request);
        Optional<Resource> resource = snapshot.resource(name);
        AllocateResponse.Builder out = AllocateResponse.newBuilder();
        for (ContainerAllocateRequest container : request.getContainerRequestsList()) {
            List<Device> devices = resolve(name, resource, container.getDevicesIdsList());
            Attachment attachment = devices.get(0).attachment();
            out.addContainerResponses(attachment == Attachment.MEDIATED
                    ? mediated(name, devices) : vfioPci(name, snapshot, devices));
        }
        return out.build();
    }

    private static List<Device> resolve(ResourceName name, Optional<Resource> resource, List<String> ids)
            throws StatusException {
        if (ids.isEmpty()) {
            throw invalid("container request for " + name + " lists no devices");
        }
        List<Device> out = new ArrayList<>();
        for (String id : new LinkedHashSet<>(ids)) {
            Device device = resource.flatMap(r -> find(r, id)).orElse(null);
            if (device == null) {
                throw invalid("unknown device " + Printable.of(id) + ": not advertised by " + name);
            }
            out.add(device);
        }
        return out;
    }

    private static Optional<Device> find(Resource resource, String id) {
        return resource.devices().stream().filter(d -> d.id().equals(id)).findFirst();
    }

    private ContainerAllocateResponse vfioPci(ResourceName name, Snapshot snapshot, List<Device> devices)
            throws StatusException {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        Set<PciAddress> requested = new TreeSet<>();
        Set<String> functions = new TreeSet<>();
        // Advertised functions the VM gets (requested ones and their advertised group members), each checked once.
        Set<String> mustHaveCdev = new TreeSet<>();
        for (Device device : devices) {
            String group = device.iommuGroup().filter(HostFiles::isGroupName)
                    .orElseThrow(() -> invalid("device " + device.id() + " has no IOMMU group"));
            requested.add(device.pciAddress().orElseThrow(() -> invalid("device " + device.id()
                    + " is not a PCI address")));
            verify(device, group, mustHaveCdev);
            functions.addAll(groups.computeIfAbsent(group, files::groupFunctions));
            for (Device member : snapshot.groupMembers(group)) {
                if (member.pciAddress().isPresent()) {
                    verify(member, group, mustHaveCdev);
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
        List<String> cdevs = files.iommufd() ? cdevs(functions, mustHaveCdev) : List.of();
        Map<String, DeviceSpec> specs = new LinkedHashMap<>();
        add(specs, "/dev/vfio/vfio");
        if (!cdevs.isEmpty()) {
            add(specs, "/dev/iommu");
        }
        groups.keySet().forEach(group -> add(specs, "/dev/vfio/" + group));
        cdevs.forEach(cdev -> add(specs, "/dev/vfio/devices/" + cdev));
        for (HostFiles.EgmRegion egm : files.egmRegions()) {
            if (egm.gpus().stream().allMatch(g -> PciAddress.isValid(g) && requested.contains(PciAddress.parse(g)))) {
                add(specs, "/dev/" + egm.name());
            }
        }
        return response(name.envVar(Attachment.VFIO_PCI), devices, specs);
    }

    /**
     * The VFIO cdevs of these functions for iommufd; empty (the legacy group nodes only) when one the VM must get
     * has none, which is logged once per such device.
     */
    private List<String> cdevs(Set<String> functions, Set<String> mustHaveCdev) {
        List<String> cdevs = new ArrayList<>();
        List<String> without = new ArrayList<>();
        for (String function : functions) {
            Optional<String> cdev = files.vfioCdev(function);
            if (cdev.isPresent()) {
                cdevs.add(cdev.get());
            } else if (mustHaveCdev.contains(function)) {
                without.add(function);
            }
        }
        for (String function : without) {
            if (loggedWithoutCdev.add(function)) {
                LOG.warn("Device {} has no VFIO device cdev under vfio-dev/ although /dev/iommu exists (a kernel"
                        + " without VFIO_DEVICE_CDEV?): allocations that include it get the legacy VFIO group nodes"
                        + " only", function);
            }
        }
        return without.isEmpty() ? cdevs : List.of();
    }

    private ContainerAllocateResponse mediated(ResourceName name, List<Device> devices) throws StatusException {
        Map<String, DeviceSpec> specs = new LinkedHashMap<>();
        add(specs, "/dev/vfio/vfio");
        for (Device device : devices) {
            String group = files.mdevIommuGroup(device.id()).filter(HostFiles::isGroupName)
                    .orElseThrow(() -> invalid("unknown device " + device.id()
                            + ": the mediated device or its IOMMU group is gone"));
            if (device.iommuGroup().isPresent() && !device.iommuGroup().get().equals(group)) {
                throw invalid("device " + device.id() + " moved from IOMMU group " + device.iommuGroup().get()
                        + " to " + group + " since discovery");
            }
            verifyIdentity(device);
            add(specs, "/dev/vfio/" + group);
        }
        return response(name.envVar(Attachment.MEDIATED), devices, specs);
    }

    /** Checks an advertised device once per request: its group, then its identity. */
    private void verify(Device device, String group, Set<String> verified) throws StatusException {
        if (verified.add(device.id())) {
            verifyGroup(device.id(), group);
            verifyIdentity(device);
        }
    }

    /** Re-checks that a function is still in {@code group}. */
    private void verifyGroup(String bdf, String group) throws StatusException {
        String now = files.pciIommuGroup(bdf).orElse(null);
        if (now == null) {
            throw invalid("unknown device " + bdf + ": its iommu_group link is gone");
        }
        if (!now.equals(group)) {
            throw invalid("device " + bdf + " moved from IOMMU group " + group + " to " + now + " since discovery");
        }
    }

    /** Asks the device's source whether it is still what was advertised. */
    private void verifyIdentity(Device device) throws StatusException {
        DeviceCheck check = rechecks.recheck(device);
        if (!check.unchanged()) {
            throw invalid(check.describe(device.id()));
        }
    }

    private static ContainerAllocateResponse response(String envVar, List<Device> devices,
                                                      Map<String, DeviceSpec> specs) {
        List<String> ids = devices.stream().map(Device::id).toList();
        return ContainerAllocateResponse.newBuilder()
                .putEnvs(envVar, String.join(",", ids))
                .addAllDevices(specs.values())
                .build();
    }

    private static void add(Map<String, DeviceSpec> specs, String path) {
        specs.putIfAbsent(path, DeviceSpec.newBuilder()
                .setHostPath(path).setContainerPath(path).setPermissions(PERMISSIONS).build());
    }

    private static StatusException invalid(String description) {
        return Status.INVALID_ARGUMENT.withDescription(description).asException();
    }
}
