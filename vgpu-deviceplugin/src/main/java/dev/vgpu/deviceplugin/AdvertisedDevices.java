package dev.vgpu.deviceplugin;

import dev.vgpu.attach.DeviceHealth;
import dev.vgpu.core.Device;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import dev.vgpu.kubelet.api.v1beta1.NUMANode;
import dev.vgpu.kubelet.api.v1beta1.TopologyInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * What one plugin advertises: its devices in id order and each device's health. Immutable.
 *
 * <p>A device is healthy when its VFIO group node is present, its GPU has no fault reported (XID) and its source
 * says it is still what was advertised (a VF still has its vGPU type, an mdev its type).
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
     * found now and the GPU fault as known now. A device that comes back with another identity (a fresh scan saw
     * it changed) is what the new list says it is, so an identity change noted earlier no longer applies to it.
     */
    AdvertisedDevices replace(List<Device> next, Predicate<String> groupNodePresent, Predicate<Device> gpuFaulty) {
        Map<String, Device> before = new TreeMap<>();
        devices.forEach(d -> before.put(d.id(), d));
        Map<String, DeviceHealth> out = new TreeMap<>();
        for (Device device : next) {
            DeviceHealth kept = health.get(device.id());
            if (kept == null) {
                out.put(device.id(), new DeviceHealth(device.iommuGroup().map(groupNodePresent::test).orElse(true),
                        gpuFaulty.test(device), ""));
            } else {
                boolean sameIdentity = before.get(device.id()).identity().equals(device.identity());
                out.put(device.id(), sameIdentity ? kept : kept.withIdentityChange(""));
            }
        }
        return new AdvertisedDevices(next, out);
    }

    /**
     * The same devices with the results of a health check: group-node presence per group and identity changes
     * per device id ({@code ""} for unchanged). Devices the check did not cover (added since it started) keep
     * their health.
     */
    AdvertisedDevices withChecks(Map<String, Boolean> groupNodes, Map<String, String> identityChanges) {
        Map<String, DeviceHealth> out = new TreeMap<>();
        for (Device device : devices) {
            DeviceHealth h = health.get(device.id());
            Boolean present = device.iommuGroup().map(groupNodes::get).orElse(Boolean.TRUE);
            if (present != null) {
                h = h.withGroupNodePresent(present);
            }
            String change = identityChanges.get(device.id());
            if (change != null) {
                h = h.withIdentityChange(change);
            }
            out.put(device.id(), h);
        }
        return new AdvertisedDevices(devices, out);
    }

    /** The same devices with each one's GPU-fault flag as {@code faulty} says; the rest of its health kept. */
    AdvertisedDevices withGpuFaults(Predicate<Device> faulty) {
        Map<String, DeviceHealth> out = new TreeMap<>();
        for (Device device : devices) {
            out.put(device.id(), health.get(device.id()).withGpuFault(faulty.test(device)));
        }
        return new AdvertisedDevices(devices, out);
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

    /**
     * The ListAndWatch message: every device with its health, and with its NUMA node unless {@link #withholdsTopology}.
     */
    ListAndWatchResponse toResponse() {
        boolean topology = !withholdsTopology();
        ListAndWatchResponse.Builder out = ListAndWatchResponse.newBuilder();
        for (Device device : devices) {
            dev.vgpu.kubelet.api.v1beta1.Device.Builder d = dev.vgpu.kubelet.api.v1beta1.Device.newBuilder()
                    .setID(device.id())
                    .setHealth(health.get(device.id()).healthy() ? HEALTHY : UNHEALTHY);
            if (topology) {
                device.numaNode().ifPresent(n -> d.setTopology(TopologyInfo.newBuilder()
                        .addNodes(NUMANode.newBuilder().setID(n))));
            }
            out.addDevices(d);
        }
        return out.build();
    }

    /**
     * Whether ListAndWatch leaves out the NUMA node of every device: it does when any device has none. Once some
     * device of a resource has topology, the kubelet's topology manager never counts one without it, so under the
     * {@code single-numa-node} and {@code restricted} policies a request that needs those devices would fail
     * (docs/HOST-FACTS.md trap 1). The devices themselves keep their nodes (discover shows them, and the preferred
     * allocation still packs by node).
     */
    boolean withholdsTopology() {
        return devices.stream().anyMatch(d -> d.numaNode().isEmpty());
    }

    /**
     * The ids of the devices without a NUMA node when the resource mixes them with devices that have one (so
     * topology is withheld from devices that know their node), in id order; empty when it does not mix them.
     */
    List<String> withoutNumaNodeWhenMixed() {
        List<String> without = devices.stream().filter(d -> d.numaNode().isEmpty()).map(Device::id).toList();
        return without.size() < devices.size() ? without : List.of();
    }
}
