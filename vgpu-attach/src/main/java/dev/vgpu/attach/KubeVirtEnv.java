package dev.vgpu.attach;

import dev.vgpu.core.Device;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment KubeVirt's device-plugin path reads to find a VM's host devices (docs/HOST-FACTS.md §2.4): per
 * resource and attachment, {@code PCI_RESOURCE_<NAME>} with the PCI addresses or {@code MDEV_PCI_RESOURCE_<NAME>}
 * with the mdev UUIDs, comma-joined in the order given ({@code <NAME>} is the full resource name upper-cased, with
 * {@code /} and {@code .} as {@code _}). The one builder of it: the device plugin's Allocate sets it for a container
 * request, and the DRA plugin's Prepare sets it through the CDI spec of an extended-resource claim, so that an
 * unchanged VM asking for {@code nvidia.com/<NAME>} finds the same variables either way. Pure.
 * <pre>{@code
 * Map<String, String> env = KubeVirtEnv.of(List.of(vf1, vf2));
 * // {PCI_RESOURCE_NVIDIA_COM_L40S-1Q=0000:1b:00.4,0000:1b:00.5}
 * }</pre>
 */
public final class KubeVirtEnv {

    private KubeVirtEnv() {
    }

    /**
     * One variable per resource and attachment, in the order of each one's first device, its value that resource's
     * device ids comma-joined in the order given; a device given twice counts once.
     */
    public static Map<String, String> of(Collection<Device> devices) {
        Map<String, String> env = new LinkedHashMap<>();
        devices.stream().distinct().forEach(device -> env.merge(device.resource().envVar(device.attachment()),
                device.id(), (a, b) -> a + "," + b));
        return Collections.unmodifiableMap(env);
    }
}
