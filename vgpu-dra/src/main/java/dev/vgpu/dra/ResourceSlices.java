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
import java.util.function.Consumer;

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
        return devices(driver, snapshot, unhealthy, omission -> { });
    }

    /**
     * {@link #devices(DriverName, Snapshot, Set)}, telling {@code omitted} of every attribute value left out of a
     * device because it is longer than the API allows (the caller logs it, once per omission).
     */
    public static List<List<SliceDevice>> devices(DriverName driver, Snapshot snapshot, Set<String> unhealthy,
                                                  Consumer<Omission> omitted) {
        List<SliceDevice> devices = new ArrayList<>();
        List<SliceTaint> taint = List.of(SliceTaint.unhealthy(driver));
        snapshot.resources().values().forEach(r -> r.devices().forEach(d -> {
            SliceDevice plain = device(d, omitted);
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
     * An attribute value that does not fit its device's entry: a string longer than
     * {@value DeviceAttribute#MAX_VALUE_BYTES} bytes of UTF-8 (a profile or pci.ids name in another script, a
     * 63-character resource name after {@code nvidia.com/}). The device is published without it: one attribute less
     * is better than a slice the API server refuses, which would publish no device of the node.
     *
     * @param device    the device's name in the pool
     * @param attribute the attribute's name
     * @param bytes     the value's length in UTF-8 bytes
     */
    public record Omission(String device, String attribute, int bytes) {
        /** One sentence for a WARN. */
        public String describe() {
            return "attribute " + attribute + " of device " + device + " is left out of its ResourceSlice: its value"
                    + " has " + bytes + " bytes of UTF-8, the API server accepts at most "
                    + DeviceAttribute.MAX_VALUE_BYTES;
        }
    }

    /** {@link #device(Device, Consumer)} with omissions unheard. */
    static SliceDevice device(Device device) {
        return device(device, omission -> { });
    }

    /**
     * One device with its attributes: {@code type} ({@code passthrough}, {@code vgpu} or {@code mdev}),
     * {@code resourceName} and {@code profile} (each when it fits 64 bytes of UTF-8), {@code deviceId},
     * {@code iommuGroup},
     * {@code numaNode} (only when known), {@code parentPciBusID} (VFs and mdevs), {@code vgpuTypeId} (VFs);
     * {@code resource.kubernetes.io/pciBusID} and {@code resource.kubernetes.io/pcieRoot} for PCI functions only;
     * {@code mdevUUID} for mdevs only. A fact the source did not record is left out.
     */
    static SliceDevice device(Device device, Consumer<Omission> omitted) {
        String name = DeviceNames.of(device);
        Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
        // Every string value through one check in bytes: sysfs and pci.ids text is the host's, of any script.
        java.util.function.BiConsumer<String, String> string = (key, value) -> {
            if (DeviceAttribute.StringValue.fits(value)) {
                attributes.put(key, new DeviceAttribute.StringValue(value));
            } else {
                omitted.accept(new Omission(name, key, DeviceAttribute.bytes(value)));
            }
        };
        boolean mediated = device.attachment() == Attachment.MEDIATED;
        string.accept("type", mediated ? "mdev" : device.parent().isPresent() ? "vgpu" : "passthrough");
        string.accept("resourceName", device.resource().fullName());
        DeviceFacts facts = device.facts();
        facts.profile().ifPresent(p -> string.accept("profile", p));
        facts.deviceId().ifPresent(d -> string.accept("deviceId", d));
        facts.vgpuTypeId().ifPresent(t -> attributes.put("vgpuTypeId", new DeviceAttribute.IntValue(t)));
        device.iommuGroup().filter(g -> g.chars().allMatch(Character::isDigit) && g.length() <= 9)
                .ifPresent(g -> attributes.put("iommuGroup", new DeviceAttribute.IntValue(Long.parseLong(g))));
        device.numaNode().ifPresent(n -> attributes.put("numaNode", new DeviceAttribute.IntValue(n)));
        device.parent().ifPresent(p -> string.accept("parentPciBusID", p.toString()));
        if (mediated) {
            string.accept("mdevUUID", device.id());
        } else {
            device.pciAddress().ifPresent(a -> string.accept(STANDARD + "pciBusID", a.toString()));
            facts.pcieRoot().ifPresent(r -> string.accept(STANDARD + "pcieRoot", r));
        }
        return new SliceDevice(name, attributes);
    }
}
