package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.deviceplugin.v1beta1.ListAndWatchResponse;
import dev.vgpu.deviceplugin.v1beta1.NUMANode;
import dev.vgpu.deviceplugin.v1beta1.TopologyInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * What one plugin advertises: its devices in id order and each device's health. Immutable.
 *
 * <p>A device is healthy when its VFIO group node is present and its GPU has no fault reported (XID).
 *
 * @param devices devices sorted by id
 * @param health  health per device id, one entry per device
 */
record AdvertisedDevices(List<Device> devices, Map<String, DeviceHealth> health) {

    /** The kubelet's health strings. */
    static final String HEALTHY = "Healthy";
    static final String UNHEALTHY = "Unhealthy";

    private static final AdvertisedDevices NONE = new AdvertisedDevices(List.of(), Map.of());

    AdvertisedDevices {
        devices = List.copyOf(devices);
        health = Map.copyOf(health);
        if (devices.size() != health.size()) {
            throw new IllegalArgumentException("health must cover exactly the devices");
        }
    }

    /** Nothing advertised (a retired resource). */
    static AdvertisedDevices none() {
        return NONE;
    }

    /**
     * The next device list: devices that stay keep their health, new devices start with their group node as
     * found now and the GPU fault as known now.
     */
    AdvertisedDevices replace(List<Device> next, Predicate<String> groupNodePresent, Predicate<Device> gpuFaulty) {
        Map<String, DeviceHealth> out = new TreeMap<>();
        for (Device device : next) {
            DeviceHealth kept = health.get(device.id());
            out.put(device.id(), kept != null ? kept
                    : new DeviceHealth(device.iommuGroup().map(groupNodePresent::test).orElse(true),
                            gpuFaulty.test(device)));
        }
        return new AdvertisedDevices(next, out);
    }

    /** The same devices with their group-node presence re-read. */
    AdvertisedDevices withGroupNodes(Predicate<String> groupNodePresent) {
        Map<String, DeviceHealth> out = new TreeMap<>();
        for (Device device : devices) {
            boolean present = device.iommuGroup().map(groupNodePresent::test).orElse(true);
            out.put(device.id(), health.get(device.id()).withGroupNodePresent(present));
        }
        return new AdvertisedDevices(devices, out);
    }

    /** The same devices with the fault flag set or cleared for the devices of one GPU. */
    AdvertisedDevices withGpuFault(PciAddress gpu, boolean faulty) {
        Map<String, DeviceHealth> out = new TreeMap<>();
        for (Device device : devices) {
            DeviceHealth h = health.get(device.id());
            out.put(device.id(), belongsTo(device, gpu) ? h.withGpuFault(faulty) : h);
        }
        return new AdvertisedDevices(devices, out);
    }

    /** True when the device is the GPU itself or lives on it (a VF of it, an mdev on it). */
    static boolean belongsTo(Device device, PciAddress gpu) {
        return device.parent().map(gpu::equals).orElse(false)
                || device.pciAddress().map(gpu::equals).orElse(false);
    }

    /** Ids whose healthy/unhealthy state differs between this and {@code other}, for logging. */
    List<String> healthFlips(AdvertisedDevices other) {
        List<String> flips = new ArrayList<>();
        for (Map.Entry<String, DeviceHealth> e : other.health.entrySet()) {
            DeviceHealth before = health.get(e.getKey());
            if (before != null && before.healthy() != e.getValue().healthy()) {
                flips.add(e.getKey());
            }
        }
        flips.sort(null);
        return flips;
    }

    /** True when this device is advertised as healthy. */
    boolean isHealthy(String id) {
        DeviceHealth h = health.get(id);
        return h != null && h.healthy();
    }

    /** The ListAndWatch message: every device with its health, and its NUMA node only when known. */
    ListAndWatchResponse toResponse() {
        ListAndWatchResponse.Builder out = ListAndWatchResponse.newBuilder();
        for (Device device : devices) {
            dev.vgpu.deviceplugin.v1beta1.Device.Builder d = dev.vgpu.deviceplugin.v1beta1.Device.newBuilder()
                    .setID(device.id())
                    .setHealth(health.get(device.id()).healthy() ? HEALTHY : UNHEALTHY);
            device.numaNode().ifPresent(n -> d.setTopology(TopologyInfo.newBuilder()
                    .addNodes(NUMANode.newBuilder().setID(n))));
            out.addDevices(d);
        }
        return out.build();
    }

    /**
     * Runtime health of one device.
     *
     * @param groupNodePresent whether {@code /dev/vfio/<group>} exists under the host root
     * @param gpuFault         whether its GPU reported a fault (XID)
     */
    record DeviceHealth(boolean groupNodePresent, boolean gpuFault) {
        boolean healthy() {
            return groupNodePresent && !gpuFault;
        }

        DeviceHealth withGroupNodePresent(boolean present) {
            return new DeviceHealth(present, gpuFault);
        }

        DeviceHealth withGpuFault(boolean faulty) {
            return new DeviceHealth(groupNodePresent, faulty);
        }
    }
}
