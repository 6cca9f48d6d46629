package dev.vgpu.dra;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceFacts;
import dev.vgpu.core.Snapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The node's pool as ResourceSlice specs (docs/DRA.md §4): every advertised device of a snapshot, sorted by name,
 * at most {@value SliceSpec#MAX_DEVICES} a slice, with the attributes a snapshot device carries (its
 * {@link dev.vgpu.core.DeviceFacts facts} included). Plain values; the publisher writes them to the API
 * server.
 * <pre>{@code
 * List<SliceSpec> slices = ResourceSlices.of(DriverName.DEFAULT, "node-a", snapshot, 1);
 * }</pre>
 */
public final class ResourceSlices {

    private static final String STANDARD = "resource.kubernetes.io/";

    private ResourceSlices() {
    }

    /** The pool of {@code nodeName} at {@code generation}: one slice when empty, else as many as needed. */
    public static List<SliceSpec> of(DriverName driver, String nodeName, Snapshot snapshot, long generation) {
        return of(driver, nodeName, snapshot, Set.of(), generation);
    }

    /**
     * The pool with every device whose id is in {@code unhealthy} tainted {@link SliceTaint#unhealthy}; a pool with
     * a tainted device has at most {@value SliceSpec#MAX_TAINTED_DEVICES} devices a slice.
     */
    public static List<SliceSpec> of(DriverName driver, String nodeName, Snapshot snapshot, Set<String> unhealthy,
                                     long generation) {
        List<SliceSpec> slices = new ArrayList<>();
        List<List<SliceDevice>> parts = devices(driver, snapshot, unhealthy);
        parts.forEach(part -> slices.add(new SliceSpec(driver, nodeName, generation, parts.size(), nodeName, part)));
        return slices;
    }

    /**
     * The pool's devices, sorted by name, cut into slices (one, empty, when there are none); a device whose id is in
     * {@code unhealthy} tainted {@link SliceTaint#unhealthy}. What a publisher pairs with the slices it finds.
     */
    public static List<List<SliceDevice>> devices(DriverName driver, Snapshot snapshot, Set<String> unhealthy) {
        List<SliceDevice> devices = new ArrayList<>();
        List<SliceTaint> taint = List.of(SliceTaint.unhealthy(driver));
        snapshot.resources().values().forEach(r -> r.devices().forEach(d -> {
            SliceDevice plain = device(d);
            devices.add(unhealthy.contains(d.id()) ? new SliceDevice(plain.name(), plain.attributes(), taint) : plain);
        }));
        devices.sort(Comparator.comparing(SliceDevice::name));
        int per = devices.stream().anyMatch(d -> !d.taints().isEmpty()) ? SliceSpec.MAX_TAINTED_DEVICES
                : SliceSpec.MAX_DEVICES;
        int count = Math.max(1, (devices.size() + per - 1) / per);
        List<List<SliceDevice>> parts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            parts.add(List.copyOf(devices.subList(i * per, Math.min(devices.size(), (i + 1) * per))));
        }
        return parts;
    }

    /**
     * One device with its attributes: {@code type} ({@code passthrough}, {@code vgpu} or {@code mdev}),
     * {@code resourceName} and {@code profile} (each when it fits 64 characters), {@code deviceId}, {@code iommuGroup},
     * {@code numaNode} (only when known), {@code parentPciBusID} (VFs and mdevs), {@code vgpuTypeId} (VFs);
     * {@code resource.kubernetes.io/pciBusID} and {@code resource.kubernetes.io/pcieRoot} for PCI functions only;
     * {@code mdevUUID} for mdevs only. A fact the source did not record is left out.
     */
    static SliceDevice device(Device device) {
        Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
        boolean mediated = device.attachment() == Attachment.MEDIATED;
        attributes.put("type", new DeviceAttribute.StringValue(mediated ? "mdev"
                : device.parent().isPresent() ? "vgpu" : "passthrough"));
        String resourceName = device.resource().fullName();
        if (resourceName.length() <= 64) {
            // A longer name (a 63-character resource after "nvidia.com/") does not fit a string attribute.
            attributes.put("resourceName", new DeviceAttribute.StringValue(resourceName));
        }
        DeviceFacts facts = device.facts();
        facts.profile().filter(p -> p.length() <= 64)
                .ifPresent(p -> attributes.put("profile", new DeviceAttribute.StringValue(p)));
        facts.deviceId().ifPresent(d -> attributes.put("deviceId", new DeviceAttribute.StringValue(d)));
        facts.vgpuTypeId().ifPresent(t -> attributes.put("vgpuTypeId", new DeviceAttribute.IntValue(t)));
        device.iommuGroup().filter(g -> g.chars().allMatch(Character::isDigit) && g.length() <= 9)
                .ifPresent(g -> attributes.put("iommuGroup", new DeviceAttribute.IntValue(Long.parseLong(g))));
        device.numaNode().ifPresent(n -> attributes.put("numaNode", new DeviceAttribute.IntValue(n)));
        device.parent().ifPresent(p -> attributes.put("parentPciBusID", new DeviceAttribute.StringValue(p.toString())));
        if (mediated) {
            attributes.put("mdevUUID", new DeviceAttribute.StringValue(device.id()));
        } else {
            device.pciAddress().ifPresent(a -> attributes.put(STANDARD + "pciBusID",
                    new DeviceAttribute.StringValue(a.toString())));
            facts.pcieRoot().ifPresent(r -> attributes.put(STANDARD + "pcieRoot", new DeviceAttribute.StringValue(r)));
        }
        return new SliceDevice(DeviceNames.of(device), attributes);
    }
}
