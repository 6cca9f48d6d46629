package dev.vgpu.deviceplugin;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.deviceplugin.v1beta1.AllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.AllocateResponse;
import dev.vgpu.deviceplugin.v1beta1.ContainerAllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.ContainerAllocateResponse;
import dev.vgpu.deviceplugin.v1beta1.DeviceSpec;
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

/**
 * Builds Allocate answers as KubeVirt reads them (docs/DOMAIN.md §3), after re-checking every device in sysfs.
 *
 * <p>VFIO PCI devices (passthrough, vendor-VFIO VFs): env {@code PCI_RESOURCE_…} with the requested BDFs;
 * {@code /dev/vfio/vfio}, each group node, and with iommufd {@code /dev/iommu} plus the {@code vfioN} cdev of
 * every function in the group; {@code /dev/egmN} when all of that region's GPUs are requested. Mediated devices:
 * env {@code MDEV_PCI_RESOURCE_…} with the UUIDs, {@code /dev/vfio/vfio} and each mdev's group node.
 * A VF whose {@code nvidia/current_vgpu_type} now reads {@code 0} (its vGPU was destroyed since discovery) is
 * refused; a function without that file is not checked.
 * DeviceSpec paths are the real host paths (host path = container path, {@code mrw}), never prefixed by the host
 * root, which is only where the checks read. Stateless and thread-safe.
 */
final class AllocateResponses {

    private static final String NVIDIA_VENDOR = "0x10de";
    private static final String PERMISSIONS = "mrw";

    private final HostFiles files;

    AllocateResponses(HostFiles files) {
        this.files = files;
    }

    /**
     * One response per container request, in order.
     *
     * @param name     the plugin's resource
     * @param snapshot the snapshot current at the call
     * @throws StatusException {@code INVALID_ARGUMENT} naming the device that is unknown, not advertised by
     *                         {@code name}, or whose IOMMU group or vendor changed; {@code FAILED_PRECONDITION}
     *                         when iommufd is on but a function has no VFIO cdev
     */
    AllocateResponse allocate(ResourceName name, Snapshot snapshot, AllocateRequest request) throws StatusException {
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
                throw invalid("unknown device " + id + ": not advertised by " + name);
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
        Map<String, DeviceSpec> specs = new LinkedHashMap<>();
        add(specs, "/dev/vfio/vfio");
        boolean iommufd = files.iommufd();
        if (iommufd) {
            add(specs, "/dev/iommu");
        }
        Set<PciAddress> requested = new TreeSet<>();
        for (Device device : devices) {
            String group = device.iommuGroup().filter(HostFiles::isGroupName)
                    .orElseThrow(() -> invalid("device " + device.id() + " has no IOMMU group"));
            requested.add(device.pciAddress().orElseThrow(() -> invalid("device " + device.id()
                    + " is not a PCI address")));
            verifyPci(device.id(), group, true);
            if (device.parent().isPresent() && files.currentVgpuType(device.id()).filter("0"::equals).isPresent()) {
                throw invalid("device " + device.id() + " has no vGPU type configured any more"
                        + " (nvidia/current_vgpu_type is 0)");
            }
            Set<String> functions = new TreeSet<>(files.groupFunctions(group));
            for (Device member : snapshot.groupMembers(group)) {
                if (member.pciAddress().isPresent()) {
                    verifyPci(member.id(), group, true);
                    functions.add(member.id());
                }
            }
            add(specs, "/dev/vfio/" + group);
            for (String function : functions) {
                verifyPci(function, group, false);
                if (iommufd) {
                    Optional<String> cdev = files.vfioCdev(function);
                    boolean advertised = snapshot.device(function).isPresent() || function.equals(device.id());
                    if (cdev.isPresent()) {
                        add(specs, "/dev/vfio/devices/" + cdev.get());
                    } else if (advertised) {
                        throw Status.FAILED_PRECONDITION.withDescription("iommufd is available but device "
                                + function + " has no VFIO device cdev under vfio-dev/").asException();
                    }
                }
            }
        }
        for (HostFiles.EgmRegion egm : files.egmRegions()) {
            if (egm.gpus().stream().allMatch(g -> PciAddress.isValid(g) && requested.contains(PciAddress.parse(g)))) {
                add(specs, "/dev/" + egm.name());
            }
        }
        return response(name.envVar(Attachment.VFIO_PCI), devices, specs);
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
            if (device.parent().isPresent()) {
                String parent = device.parent().get().toString();
                String vendor = files.pciVendor(parent).orElse("unreadable");
                if (!NVIDIA_VENDOR.equalsIgnoreCase(vendor)) {
                    throw invalid("device " + device.id() + ": parent GPU " + parent + " has vendor " + vendor
                            + ", expected " + NVIDIA_VENDOR);
                }
            }
            add(specs, "/dev/vfio/" + group);
        }
        return response(name.envVar(Attachment.MEDIATED), devices, specs);
    }

    /** Re-checks that a function is still in {@code group} and, when asked, still an NVIDIA function. */
    private void verifyPci(String bdf, String group, boolean checkVendor) throws StatusException {
        String now = files.pciIommuGroup(bdf).orElse(null);
        if (now == null) {
            throw invalid("unknown device " + bdf + ": its iommu_group link is gone");
        }
        if (!now.equals(group)) {
            throw invalid("device " + bdf + " moved from IOMMU group " + group + " to " + now + " since discovery");
        }
        if (checkVendor) {
            String vendor = files.pciVendor(bdf).orElse("unreadable");
            if (!NVIDIA_VENDOR.equalsIgnoreCase(vendor)) {
                throw invalid("device " + bdf + " has vendor " + vendor + ", expected " + NVIDIA_VENDOR);
            }
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
