package dev.vgpu.dra;

import dev.vgpu.core.ResourceName;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code resource.k8s.io/v1} DeviceClasses that bridge the node's resources to plain extended-resource requests
 * (docs/DRA.md, "The extended-resource bridge"): one per resource, selecting this driver's devices whose
 * {@code resourceName} attribute is the resource, with {@code spec.extendedResourceName} the resource, so that the
 * scheduler (Kubernetes {@code DRAExtendedResource}) satisfies {@code nvidia.com/<NAME>: 1} from DRA devices. Pure:
 * {@code discover --format deviceclasses} prints {@link Rendered#yaml}, and the deploy manifests carry the same classes.
 * <pre>{@code
 * DeviceClasses.Rendered classes = DeviceClasses.of(DriverName.DEFAULT, snapshot.resources().keySet());
 * System.out.print(classes.yaml());
 * }</pre>
 */
public final class DeviceClasses {

    /** The longest object name (a DNS subdomain). */
    static final int MAX_NAME = 253;

    private DeviceClasses() {
    }

    /**
     * One DeviceClass.
     *
     * @param name     its {@code metadata.name}
     * @param resource the resource it bridges
     */
    public record DeviceClass(String name, ResourceName resource) {
    }

    /**
     * The classes, and the resources that cannot have one.
     *
     * @param classes one per resource that can be bridged, sorted by resource
     * @param skipped per resource that cannot be, why (one sentence for a WARN)
     */
    public record Rendered(List<DeviceClass> classes, List<String> skipped, DriverName driver) {
        /** Copies the lists. */
        public Rendered {
            classes = List.copyOf(classes);
            skipped = List.copyOf(skipped);
        }

        /** The classes as YAML documents separated by {@code ---}; empty text for none. */
        public String yaml() {
            StringBuilder out = new StringBuilder();
            for (DeviceClass c : classes) {
                if (out.length() > 0) {
                    out.append("---\n");
                }
                String full = c.resource().fullName();
                out.append("apiVersion: resource.k8s.io/v1\n")
                        .append("kind: DeviceClass\n")
                        .append("metadata:\n")
                        .append("  name: ").append(c.name()).append('\n')
                        .append("spec:\n")
                        .append("  selectors:\n")
                        .append("  - cel:\n")
                        .append("      expression: \"").append(expression(driver, full)).append("\"\n")
                        .append("  extendedResourceName: ").append(full).append('\n');
            }
            return out.toString();
        }
    }

    /**
     * The classes of {@code resources} for {@code driver}. Name: the resource name's part after {@code nvidia.com/},
     * lower-cased, {@code _} and {@code .} as {@code -}, then {@code .} and the driver name, cut to 253 characters;
     * where two resources would get one name (they differ only in case or in {@code _}/{@code .}/{@code -}), each
     * after the first gets {@code -} and 8 hex digits of its full name's SHA-256 before the driver name. A
     * resource whose full name is longer than a string attribute (64 bytes) has no {@code resourceName} attribute
     * on its devices, so no class can select them: it is skipped with the reason.
     */
    public static Rendered of(DriverName driver, Collection<ResourceName> resources) {
        List<DeviceClass> classes = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (ResourceName resource : new TreeSet<>(resources)) {
            String full = resource.fullName();
            if (!DeviceAttribute.StringValue.fits(full)) {
                skipped.add("resource " + full + " gets no DeviceClass: its name has " + DeviceAttribute.bytes(full)
                        + " bytes, more than the " + DeviceAttribute.MAX_VALUE_BYTES + " of the resourceName attribute"
                        + " a class selects by (rename it in the configuration file)");
                continue;
            }
            String base = resource.name().toLowerCase(Locale.ROOT).replace('_', '-').replace('.', '-');
            String name = name(base, driver);
            if (!names.add(name)) {
                name = name(base + "-" + hash(full), driver);
                names.add(name);
            }
            classes.add(new DeviceClass(name, resource));
        }
        return new Rendered(classes, skipped, driver);
    }

    /** The CEL expression selecting this driver's devices of the resource. */
    static String expression(DriverName driver, String resource) {
        return "device.driver == '" + driver + "' && device.attributes['" + driver + "'].resourceName == '"
                + resource + "'";
    }

    private static String name(String base, DriverName driver) {
        String name = base + "." + driver;
        if (name.length() > MAX_NAME) {
            name = name.substring(0, MAX_NAME).replaceAll("[.-]+$", "");
        }
        return name;
    }

    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
