package dev.vgpu.dra;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A port of the rules by which KubeVirt's virt-launcher turns the device-plugin environment into host devices of the
 * domain (its {@code hostdevice} address pools and the generic and GPU host-device builders), to read what a
 * container got as KubeVirt would: for each VMI {@code hostDevices[]} or {@code gpus[]} entry of the
 * {@code deviceName} {@code nvidia.com/<NAME>}, a PCI address popped from {@code PCI_RESOURCE_<NAME>}, and for each
 * entry, after all PCI ones, an mdev UUID popped from {@code MDEV_PCI_RESOURCE_<NAME>}. Written from reading those
 * rules, not copied:
 * <ul>
 *   <li>a variable's name: {@code <prefix>_} + the device name upper-cased with {@code /} and {@code .} as {@code _};
 *   <li>a variable that is not set leaves its resource without a pool (a pop gives nothing, best effort); a set one
 *       loses one trailing comma and is split on commas (empty: a pool with nothing in it);
 *   <li>a pop takes the first address of the resource's pool and removes that address from every pool;
 *   <li>an entry whose pop gives nothing gets no device of that kind;
 *   <li>in the end the number of devices must equal the number of entries, else the VM does not start.
 * </ul>
 */
final class KubeVirtEnvReader {

    private KubeVirtEnvReader() {
    }

    /** A VMI's {@code hostDevices[]} or {@code gpus[]} entry of the device-plugin kind. */
    record VmiDevice(String name, String deviceName) {
    }

    /** A domain host device: {@code type} {@code pci} with a PCI address or {@code mdev} with a UUID. */
    record HostDevice(String alias, String type, String address) {
    }

    /** What KubeVirt refuses; the launcher fails the VM with it. */
    static final class Rejected extends Exception {
        Rejected(String message) {
            super(message);
        }
    }

    /** The host devices KubeVirt builds for these entries from this environment. */
    static List<HostDevice> hostDevices(List<VmiDevice> devices, Map<String, String> env) throws Rejected {
        List<String> resources = new ArrayList<>(new LinkedHashSet<>(devices.stream().map(VmiDevice::deviceName)
                .toList()));
        Pool pci = new Pool("PCI_RESOURCE", resources, env);
        Pool mdev = new Pool("MDEV_PCI_RESOURCE", resources, env);
        List<HostDevice> out = new ArrayList<>();
        for (VmiDevice device : devices) {
            pci.pop(device.deviceName()).ifPresent(a -> out.add(new HostDevice("hostdevice-" + device.name(), "pci",
                    a)));
        }
        for (VmiDevice device : devices) {
            mdev.pop(device.deviceName()).ifPresent(a -> out.add(new HostDevice("hostdevice-" + device.name(),
                    "mdev", a)));
        }
        if (out.size() != devices.size()) {
            throw new Rejected("the number of device plugin HostDevices (" + devices.size()
                    + ") does not match the number of devices (" + out.size() + ")");
        }
        return out;
    }

    /** KubeVirt's variable name for a resource. */
    static String variable(String prefix, String resource) {
        return prefix + "_" + resource.toUpperCase(Locale.ROOT).replace('/', '_').replace('.', '_');
    }

    /** One prefix's addresses by resource. */
    private static final class Pool {
        private final Map<String, List<String>> byResource = new LinkedHashMap<>();

        Pool(String prefix, List<String> resources, Map<String, String> env) {
            for (String resource : resources) {
                String value = env.get(variable(prefix, resource));
                if (value == null) {
                    continue;
                }
                if (value.endsWith(",")) {
                    value = value.substring(0, value.length() - 1);
                }
                byResource.put(resource, value.isEmpty() ? new ArrayList<>()
                        : new ArrayList<>(Arrays.asList(value.split(",", -1))));
            }
        }

        Optional<String> pop(String resource) {
            List<String> addresses = byResource.get(resource);
            if (addresses == null || addresses.isEmpty()) {
                return Optional.empty();
            }
            String address = addresses.get(0);
            byResource.values().forEach(list -> list.removeIf(address::equals));
            return Optional.of(address);
        }
    }
}
