package dev.vgpu.dra;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * One device of a ResourceSlice: its name in the pool and its attributes (docs/DRA.md §4). The name is a DNS label;
 * attribute names are a C identifier of at most 32 characters, optionally after a DNS-subdomain domain and a
 * {@code /} (63 at most); at most 32 attributes.
 *
 * @param name       e.g. {@code pci-0000-1b-00-4}
 * @param attributes by name, sorted; unqualified names belong to the driver
 * @param taints     at most {@value SliceTaint#MAX_PER_DEVICE}, keys unique (an unhealthy device's)
 */
public record SliceDevice(String name, Map<String, DeviceAttribute> attributes, List<SliceTaint> taints) {

    /** The most attributes (with capacities) a device may have. */
    public static final int MAX_ATTRIBUTES = 32;

    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,31}");
    private static final Pattern DOMAIN = Pattern.compile("(?=.{1,63}$)[a-z0-9]([a-z0-9.-]*[a-z0-9])?");

    /** Validates the name, every attribute name and the count; sorts the attributes by name. */
    public SliceDevice {
        if (name == null || !LABEL.matcher(name).matches()) {
            throw new IllegalArgumentException("a slice device name is a DNS label, got " + name);
        }
        Objects.requireNonNull(attributes, "attributes");
        if (attributes.size() > MAX_ATTRIBUTES) {
            throw new IllegalArgumentException("device " + name + " has " + attributes.size() + " attributes, more"
                    + " than " + MAX_ATTRIBUTES);
        }
        attributes.forEach((key, value) -> {
            Objects.requireNonNull(value, key);
            if (!validName(key)) {
                throw new IllegalArgumentException("device " + name + ": bad attribute name " + key);
            }
        });
        attributes = Collections.unmodifiableMap(new TreeMap<>(attributes));
        taints = List.copyOf(taints);
        if (taints.size() > SliceTaint.MAX_PER_DEVICE
                || taints.stream().map(SliceTaint::key).distinct().count() != taints.size()) {
            throw new IllegalArgumentException("device " + name + " has more than " + SliceTaint.MAX_PER_DEVICE
                    + " taints or one key twice");
        }
    }

    /** A device without taints. */
    public SliceDevice(String name, Map<String, DeviceAttribute> attributes) {
        this(name, attributes, List.of());
    }

    /** Whether {@code name} is an attribute name the API accepts. */
    static boolean validName(String name) {
        int slash = name.indexOf('/');
        if (slash < 0) {
            return IDENTIFIER.matcher(name).matches();
        }
        return DOMAIN.matcher(name.substring(0, slash)).matches()
                && IDENTIFIER.matcher(name.substring(slash + 1)).matches();
    }
}
