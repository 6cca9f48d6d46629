package dev.vgpu.dra;

import dev.vgpu.attach.DeviceNode;
import dev.vgpu.core.internal.JsonText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CDI specs of a prepared claim (docs/DRA.md §5, §6): the claim spec, kind {@code <driver>/claim}, with one
 * device {@code <claimUID>-<deviceName>} per allocated device carrying its own VFIO nodes, and per request a
 * metadata spec, kind {@code <driver>/metadata}, that bind-mounts the request's KEP-5304 metadata file read-only.
 * Version 0.5.0: a claim UID may start with a digit, which older versions refuse in a device name.
 */
final class CdiSpecs {

    static final String CDI_VERSION = "0.5.0";

    private CdiSpecs() {
    }

    /**
     * One device of the claim spec: its CDI name, its nodes and the environment it sets (empty but for the first
     * device of each request of an extended-resource claim).
     */
    record SpecDevice(String name, List<DeviceNode> nodes, Map<String, String> env) {
        SpecDevice {
            nodes = List.copyOf(nodes);
            env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
        }
    }

    /** The claim spec's device name of a pool device: unique per claim, never reused for other content. */
    static String deviceName(String uid, String poolDevice) {
        return uid + "-" + poolDevice;
    }

    /** The CDI id of a claim spec device. */
    static String claimId(DriverName driver, String uid, String poolDevice) {
        return driver + "/claim=" + deviceName(uid, poolDevice);
    }

    /** The CDI id of a request's metadata mount. */
    static String metadataId(DriverName driver, String uid, String baseRequest) {
        return driver + "/metadata=" + uid + "_" + baseRequest;
    }

    /**
     * The claim spec.
     *
     * @param shared nodes the whole handover needs rather than one device (EGM); in the spec-level edits, which a
     *               runtime applies with any of the spec's devices
     */
    static String claimSpec(DriverName driver, List<SpecDevice> devices, List<DeviceNode> shared) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("cdiVersion", CDI_VERSION);
        spec.put("kind", driver + "/claim");
        List<Object> list = new ArrayList<>();
        for (SpecDevice device : devices) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", device.name());
            Map<String, Object> edits = new LinkedHashMap<>();
            if (!device.env().isEmpty()) {
                List<String> env = new ArrayList<>();
                device.env().forEach((key, value) -> env.add(key + "=" + value));
                edits.put("env", env);
            }
            edits.put("deviceNodes", nodes(device.nodes()));
            entry.put("containerEdits", edits);
            list.add(entry);
        }
        spec.put("devices", list);
        if (!shared.isEmpty()) {
            spec.put("containerEdits", Map.of("deviceNodes", nodes(shared)));
        }
        return JsonText.write(spec) + "\n";
    }

    /** The metadata spec of one request: one device whose only edit is the read-only bind mount. */
    static String metadataSpec(DriverName driver, String uid, String baseRequest, String hostPath,
                               String containerPath) {
        Map<String, Object> mount = new LinkedHashMap<>();
        mount.put("hostPath", hostPath);
        mount.put("containerPath", containerPath);
        mount.put("options", List.of("ro", "bind"));
        Map<String, Object> device = new LinkedHashMap<>();
        device.put("name", uid + "_" + baseRequest);
        device.put("containerEdits", Map.of("mounts", List.of(mount)));
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("cdiVersion", CDI_VERSION);
        spec.put("kind", driver + "/metadata");
        spec.put("devices", List.of(device));
        return JsonText.write(spec) + "\n";
    }

    /** Nodes at the same path inside the container as on the host, with the permissions KubeVirt asks for. */
    private static List<Object> nodes(List<DeviceNode> nodes) {
        List<Object> out = new ArrayList<>();
        for (DeviceNode node : nodes) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("path", node.path());
            entry.put("hostPath", node.path());
            entry.put("permissions", DeviceNode.PERMISSIONS);
            out.add(entry);
        }
        return out;
    }
}
