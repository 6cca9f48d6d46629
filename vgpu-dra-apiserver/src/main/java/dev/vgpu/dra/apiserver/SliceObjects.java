package dev.vgpu.dra.apiserver;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import dev.vgpu.dra.DeviceAttribute;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.SliceDevice;
import dev.vgpu.dra.SliceSpec;
import dev.vgpu.dra.SliceTaint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Translation between vgpu-dra's slice values and fabric8's {@code resource.k8s.io/v1} objects; nothing else.
 */
final class SliceObjects {

    private SliceObjects() {
    }

    /**
     * The {@code generateName} of this node's slices: {@code <node>-<driver>-}, cut to leave room for the five
     * characters the API server appends within the 253 of a name.
     */
    static String generateName(DriverName driver, String node) {
        String prefix = node + "-" + driver.value();
        if (prefix.length() > 200) {
            prefix = prefix.substring(0, 200);
        }
        return prefix.replaceAll("[.-]+$", "") + "-";
    }

    /**
     * The label every slice of this driver and node carries, {@code <driver>/node}: its value is the node name when
     * that is a label value (at most 63 characters), else {@code h-} and 16 hex digits of the name's SHA-256. The
     * publisher lists and watches by it, so that the API server selects the node's slices (fabric8's mock server
     * implements label selectors but not the {@code spec.driver}/{@code spec.nodeName} field selectors the Go helper
     * uses); the specs are checked again by hand.
     */
    static String labelKey(DriverName driver) {
        return driver.value() + "/node";
    }

    /** The value of {@link #labelKey} for {@code node}. */
    static String labelValue(String node) {
        if (node.length() <= 63 && node.matches("[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?")) {
            return node;
        }
        try {
            byte[] hash = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(node.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "h-" + java.util.HexFormat.of().formatHex(hash, 0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * A slice object for {@code spec}, owned by the Node. {@code base} (an existing slice to update) gives the name
     * and resourceVersion; null makes a new one with {@code generateName}.
     *
     * @param taintedSince device name → the RFC 3339 time its taint was first published
     */
    static ResourceSlice toObject(SliceSpec spec, String nodeUid, ResourceSlice base,
                                  Function<String, String> taintedSince) {
        OwnerReference owner = new OwnerReferenceBuilder().withApiVersion("v1").withKind("Node")
                .withName(spec.nodeName()).withUid(nodeUid).withController(true).build();
        ObjectMetaBuilder meta = new ObjectMetaBuilder().withOwnerReferences(owner);
        Map<String, String> labels = new LinkedHashMap<>();
        if (base == null) {
            meta.withGenerateName(generateName(spec.driver(), spec.nodeName()));
        } else {
            meta.withName(base.getMetadata().getName()).withResourceVersion(base.getMetadata().getResourceVersion())
                    .withAnnotations(base.getMetadata().getAnnotations());
            if (base.getMetadata().getLabels() != null) {
                labels.putAll(base.getMetadata().getLabels());
            }
        }
        labels.put(labelKey(spec.driver()), labelValue(spec.nodeName()));
        meta.withLabels(labels);
        List<Device> devices = new ArrayList<>();
        for (SliceDevice d : spec.devices()) {
            Map<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute> attributes = new LinkedHashMap<>();
            d.attributes().forEach((name, value) -> attributes.put(name, attribute(value)));
            Device device = new Device();
            device.setName(d.name());
            device.setAttributes(attributes);
            if (!d.taints().isEmpty()) {
                List<DeviceTaint> taints = new ArrayList<>();
                for (SliceTaint t : d.taints()) {
                    taints.add(new DeviceTaint(t.effect(), t.key(), taintedSince.apply(d.name()),
                            t.value().isEmpty() ? null : t.value()));
                }
                device.setTaints(taints);
            }
            devices.add(device);
        }
        ResourceSliceSpec body = new ResourceSliceSpec();
        body.setDriver(spec.driver().value());
        body.setNodeName(spec.nodeName());
        body.setPool(new ResourcePool(spec.generation(), spec.pool(), (long) spec.resourceSliceCount()));
        body.setDevices(devices);
        ResourceSlice slice = new ResourceSlice();
        slice.setApiVersion("resource.k8s.io/v1");
        slice.setKind("ResourceSlice");
        slice.setMetadata(meta.build());
        slice.setSpec(body);
        return slice;
    }

    /**
     * The devices of a published slice as values (taint times left out), or null when it holds anything these
     * values cannot say (another writer's slice, a list attribute): such a slice is rewritten.
     */
    static List<SliceDevice> devices(ResourceSlice slice) {
        if (slice.getSpec() == null) {
            return null;
        }
        List<SliceDevice> devices = new ArrayList<>();
        try {
            for (Device d : slice.getSpec().getDevices() == null ? List.<Device>of() : slice.getSpec().getDevices()) {
                Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
                if (d.getAttributes() != null) {
                    for (var e : d.getAttributes().entrySet()) {
                        DeviceAttribute value = value(e.getValue());
                        if (value == null) {
                            return null;
                        }
                        attributes.put(e.getKey(), value);
                    }
                }
                List<SliceTaint> taints = new ArrayList<>();
                if (d.getTaints() != null) {
                    for (DeviceTaint t : d.getTaints()) {
                        taints.add(new SliceTaint(t.getKey(), t.getValue() == null ? "" : t.getValue(),
                                t.getEffect()));
                    }
                }
                devices.add(new SliceDevice(d.getName(), attributes, taints));
            }
        } catch (RuntimeException e) {
            return null;
        }
        return devices;
    }

    /**
     * The fields of {@code sent} that {@code stored} lacks, named as the API names them, sorted and comma-joined:
     * {@code spec.devices[].taints}, {@code spec.devices[].attributes[<name>]}, {@code spec.devices[<name>]}; {@code
     * other fields} when the difference is none of these. Pure.
     */
    static String droppedFields(List<SliceDevice> sent, List<SliceDevice> stored) {
        java.util.Map<String, SliceDevice> byName = new java.util.HashMap<>();
        stored.forEach(d -> byName.put(d.name(), d));
        java.util.SortedSet<String> fields = new java.util.TreeSet<>();
        for (SliceDevice device : sent) {
            SliceDevice kept = byName.get(device.name());
            if (kept == null) {
                fields.add("spec.devices[" + device.name() + "]");
                continue;
            }
            if (!device.taints().isEmpty() && kept.taints().isEmpty()) {
                fields.add("spec.devices[].taints");
            }
            device.attributes().keySet().stream().filter(k -> !kept.attributes().containsKey(k))
                    .forEach(k -> fields.add("spec.devices[].attributes[" + k + "]"));
        }
        return fields.isEmpty() ? "other fields" : String.join(", ", fields);
    }

    /** Device name → the {@code timeAdded} of its taint with this key, for the devices of a published slice. */
    static Map<String, String> taintTimes(ResourceSlice slice, String key) {
        Map<String, String> times = new LinkedHashMap<>();
        if (slice.getSpec() == null || slice.getSpec().getDevices() == null) {
            return times;
        }
        for (Device d : slice.getSpec().getDevices()) {
            if (d.getName() == null || d.getTaints() == null) {
                continue;
            }
            for (DeviceTaint t : d.getTaints()) {
                if (key.equals(t.getKey()) && t.getTimeAdded() != null && !t.getTimeAdded().isBlank()) {
                    times.put(d.getName(), t.getTimeAdded());
                }
            }
        }
        return times;
    }

    /** The pool generation a published slice carries; 0 when it has none. */
    static long generation(ResourceSlice slice) {
        return slice.getSpec() == null || slice.getSpec().getPool() == null
                || slice.getSpec().getPool().getGeneration() == null ? 0 : slice.getSpec().getPool().getGeneration();
    }

    /** The pool's slice count a published slice carries; 0 when it has none. */
    static long sliceCount(ResourceSlice slice) {
        return slice.getSpec() == null || slice.getSpec().getPool() == null
                || slice.getSpec().getPool().getResourceSliceCount() == null ? 0
                : slice.getSpec().getPool().getResourceSliceCount();
    }

    /** Whether a published slice is owned by the Node with {@code uid}. */
    static boolean ownedBy(ResourceSlice slice, String uid) {
        List<OwnerReference> owners = slice.getMetadata().getOwnerReferences();
        return owners != null && owners.size() == 1 && "Node".equals(owners.get(0).getKind())
                && uid.equals(owners.get(0).getUid());
    }

    private static io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute attribute(DeviceAttribute value) {
        var a = new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute();
        if (value instanceof DeviceAttribute.IntValue i) {
            a.setInt(i.value());
        } else if (value instanceof DeviceAttribute.BoolValue b) {
            a.setBool(b.value());
        } else if (value instanceof DeviceAttribute.StringValue s) {
            a.setString(s.value());
        } else if (value instanceof DeviceAttribute.VersionValue v) {
            a.setVersion(v.value());
        }
        return a;
    }

    private static DeviceAttribute value(io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute a) {
        int set = (a.getInt() != null ? 1 : 0) + (a.getBool() != null ? 1 : 0) + (a.getString() != null ? 1 : 0)
                + (a.getVersion() != null ? 1 : 0);
        if (set != 1) {
            return null;
        }
        if (a.getInt() != null) {
            return new DeviceAttribute.IntValue(a.getInt());
        }
        if (a.getBool() != null) {
            return new DeviceAttribute.BoolValue(a.getBool());
        }
        return a.getString() != null ? new DeviceAttribute.StringValue(a.getString())
                : new DeviceAttribute.VersionValue(a.getVersion());
    }
}
