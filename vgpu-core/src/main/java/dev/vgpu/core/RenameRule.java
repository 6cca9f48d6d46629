package dev.vgpu.core;

import java.util.Objects;

/**
 * Advertises the devices a match finds under another resource name; several rules may give one name (a generic
 * {@code nvidia.com/pgpu} for every whole GPU). The name is a valid {@link ResourceName} already, so the socket file,
 * the environment variable KubeVirt reads and the metrics follow it as they follow any name.
 * <pre>{@code
 * new RenameRule(DeviceMatch.source("passthrough"), new ResourceName("pgpu"))
 * }</pre>
 *
 * @param match which devices
 * @param name  the resource they are advertised under
 */
public record RenameRule(DeviceMatch match, ResourceName name) {

    /** Checks that nothing is null. */
    public RenameRule {
        Objects.requireNonNull(match, "match");
        Objects.requireNonNull(name, "name");
    }
}
