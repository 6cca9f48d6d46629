package dev.vgpu.dra;

import java.util.regex.Pattern;

/**
 * A DRA driver name, e.g. {@code gpu.vgpu.dev}: a DNS subdomain of at most 63 characters, as the ResourceSlice
 * API and the kubelet require (docs/DRA.md §1), whose first character is a letter, as the CDI vendor it also is
 * must be (a container runtime refuses a spec whose kind's vendor starts with a digit). Everything the driver names
 * derives from it: the registration socket {@code <driver>-reg.sock}, the DRA socket directory {@code plugins/<driver>/}, the CDI kinds
 * {@code <driver>/claim} and {@code <driver>/metadata}, and the metadata file name {@code <driver>-metadata.json}.
 *
 * @param value the name, lower case
 */
public record DriverName(String value) {

    // Before DEFAULT: static fields initialize in order, and DEFAULT's constructor reads this.
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]*[a-z0-9])?");

    /** The default driver name of the daemon. */
    public static final DriverName DEFAULT = new DriverName("gpu.vgpu.dev");

    /**
     * Checks the Kubernetes rule (a DNS subdomain: 1-63 characters, dot-separated labels of {@code [a-z0-9-]}), then
     * the CDI rule (the first character is a letter).
     *
     * @throws IllegalArgumentException naming the rule the name breaks
     */
    public DriverName {
        if (value == null || value.isEmpty() || value.length() > 63) {
            throw new IllegalArgumentException("a DRA driver name has 1-63 characters, got "
                    + (value == null ? "null" : value.length() + ": \"" + dev.vgpu.core.internal.Printable.of(value) + "\""));
        }
        for (String label : value.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                throw new IllegalArgumentException("a DRA driver name is a DNS subdomain (lower-case labels of"
                        + " a-z, 0-9 and '-', separated by dots), got \"" + dev.vgpu.core.internal.Printable.of(value) + "\"");
            }
        }
        if (!Character.isLetter(value.charAt(0))) {
            throw new IllegalArgumentException("a DRA driver name is also the CDI vendor of the specs it writes"
                    + " (<driver>/claim), and a CDI vendor starts with a letter; got \""
                    + dev.vgpu.core.internal.Printable.of(value) + "\"");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
