package dev.vgpu.daemon.discover;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.Resource;
import dev.vgpu.core.Snapshot;
import dev.vgpu.hostfiles.HostFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code discover --format kubevirt}: the {@code permittedHostDevices} of the KubeVirt CR for every resource a scan
 * would advertise (README "KubeVirt configuration"), so that nobody writes the names this daemon invents by hand.
 * PCI functions (passthrough GPUs, VFs) give {@code pciVendorSelector "<VENDOR>:<DEVICE>"} from their own
 * {@code vendor} and {@code device} files, mdevs {@code mdevNameSelector} = their type's exact {@code name}; every
 * entry has {@code externalResourceProvider: true} (this daemon, not KubeVirt, serves the resource). One entry per
 * (selector, resource), sorted by resource name, then selector. The output is YAML for {@code kubectl patch}.
 */
final class KubeVirtReport {

    private record Entry(String resource, String selector) implements Comparable<Entry> {
        @Override
        public int compareTo(Entry o) {
            int byName = resource.compareTo(o.resource);
            return byName != 0 ? byName : selector.compareTo(o.selector);
        }
    }

    private KubeVirtReport() {
    }

    /**
     * The CR fragment.
     *
     * @param snapshot what one scan found (after the configuration's rules)
     * @param hostRoot the root that scan read, for the selectors
     * @param files    the reader of its files
     */
    static String yaml(Snapshot snapshot, Path hostRoot, HostFiles files) {
        Set<Entry> pci = new TreeSet<>();
        Set<Entry> mdevs = new TreeSet<>();
        List<String> unknown = new ArrayList<>();
        for (Resource resource : snapshot.resources().values()) {
            for (Device device : resource.devices()) {
                String name = resource.name().fullName();
                try {
                    if (device.attachment() == Attachment.MEDIATED) {
                        mdevs.add(new Entry(name, files.read(hostRoot.resolve("sys/bus/mdev/devices")
                                .resolve(device.id()).resolve("mdev_type/name")).strip()));
                    } else {
                        Path dir = hostRoot.resolve("sys/bus/pci/devices").resolve(device.id());
                        pci.add(new Entry(name, hex(files.read(dir.resolve("vendor"))) + ":"
                                + hex(files.read(dir.resolve("device")))));
                    }
                } catch (IOException e) {
                    unknown.add(name + " device " + device.id() + ": " + e.getMessage());
                }
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("# permittedHostDevices for the resources this host advertises (vgpu-daemon discover --format"
                + " kubevirt).\n# Merge it into the KubeVirt CR: kubectl patch kubevirt kubevirt -n kubevirt --type"
                + " merge --patch-file FILE\n# (a merge patch replaces both lists: join the output of every kind of"
                + " node first).\n");
        unknown.forEach(u -> out.append("# left out, its selector cannot be read: ").append(oneLine(u)).append('\n'));
        out.append("spec:\n  configuration:\n    permittedHostDevices:\n");
        section(out, "pciHostDevices", "pciVendorSelector", pci);
        section(out, "mediatedDevices", "mdevNameSelector", mdevs);
        return out.toString();
    }

    private static void section(StringBuilder out, String list, String selectorField, Set<Entry> entries) {
        out.append("      ").append(list).append(':').append(entries.isEmpty() ? " []\n" : "\n");
        for (Entry e : entries) {
            out.append("        - ").append(selectorField).append(": ").append(quoted(e.selector())).append('\n')
                    .append("          resourceName: ").append(quoted(e.resource())).append('\n')
                    .append("          externalResourceProvider: true\n");
        }
    }

    /** {@code 0x10de\n} → {@code 10DE}. */
    private static String hex(String text) throws IOException {
        String t = text.strip().toLowerCase(Locale.ROOT);
        String digits = t.startsWith("0x") ? t.substring(2) : t;
        if (!digits.matches("[0-9a-f]{4}")) {
            throw new IOException("not a PCI id: \"" + oneLine(text) + "\"");
        }
        return digits.toUpperCase(Locale.ROOT);
    }

    /** A YAML double-quoted scalar: backslash, quote and control characters escaped. */
    static String quoted(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c == 0x7f) {
                out.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    private static String oneLine(String text) {
        return text.replaceAll("[\\r\\n]+", " ");
    }
}
