package dev.vgpu.sysfs;

import dev.vgpu.attach.internal.HostVfio;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which function of an IOMMU group the passthrough source may advertise (docs/HOST-FACTS.md §1d): none when the
 * group is not viable (a function other than a PCI bridge is outside VFIO), else its display-class NVIDIA function
 * with the lowest BDF, else its lowest-BDF NVIDIA function; SR-IOV virtual functions never count.
 *
 * <p>One per scan of the passthrough source, which asks for each NVIDIA function on a VFIO driver; each group's
 * members are listed and judged once, on the first question. Drivers and vendors come from the reads the scan
 * scope shares with the bus walk ({@link PciBus}); only {@code class} files are read here, and only where the
 * answer depends on them. A member list that is missing or unreadable, a member that vanished or is no PCI
 * function, or a {@code class} that cannot be read where it matters makes the group advertise nothing, with the
 * reason: the kernel makes every one of them, so the tree is not one to guess from, and a device advertised from a
 * group QEMU refuses loses the VM that gets it. Confined to the thread running {@code discover}.
 */
final class IommuGroups {

    static final String IOMMU_GROUPS = "sys/kernel/iommu_groups";
    /** The class of a PCI-to-PCI bridge, the upper 16 bits of {@code 0x0604xx}. */
    private static final int PCI_BRIDGE = 0x0604;
    /** The base class of display controllers, the upper 8 bits of {@code 0x03xxxx} (VGA, 3D, ...). */
    private static final int DISPLAY = 0x03;

    private final Host host;
    private final Path bus;
    private final Map<String, Verdict> verdicts = new HashMap<>();

    IommuGroups(Host host) {
        this.host = host;
        this.bus = host.path(PciBus.PCI_DEVICES);
    }

    /**
     * What a group allows: one function to advertise, or nothing and why.
     *
     * <p>{@link #members()}: the functions the group lists, in BDF order; empty when it lists none or could not be
     * listed.
     */
    sealed interface Verdict {

        List<String> members();

        /**
         * The group is viable and this one function of it is advertised.
         *
         * @param advertised the BDF of the function to advertise
         */
        record Advertise(List<String> members, String advertised) implements Verdict {
            public Advertise {
                members = List.copyOf(members);
                Objects.requireNonNull(advertised, "advertised");
            }
        }

        /**
         * Nothing of the group may be advertised.
         *
         * @param why a clause naming the group
         */
        record Nothing(List<String> members, String why) implements Verdict {
            public Nothing {
                members = List.copyOf(members);
                Objects.requireNonNull(why, "why");
            }

            static Nothing unlisted(String why) {
                return new Nothing(List.of(), why);
            }
        }
    }

    /** The verdict on group {@code group} (a decimal number), judged on the first call for it. */
    Verdict of(String group) {
        Verdict verdict = verdicts.get(group);
        if (verdict == null) {
            verdict = judge(group);
            verdicts.put(group, verdict);
        }
        return verdict;
    }

    private Verdict judge(String group) {
        String named = "IOMMU group " + group;
        List<PciAddress> addresses = new ArrayList<>();
        // Listed through the scope, so that a handover checking this group's members lists it only once with us.
        HostVfio.GroupListing listing = HostVfio.groupListing(host, group);
        if (listing instanceof HostVfio.GroupListing.Unlisted unlisted) {
            return Verdict.Nothing.unlisted(unlisted.failure() instanceof NoSuchFileException
                    ? named + " cannot be shown to be viable: " + IOMMU_GROUPS + "/" + group + "/devices is missing"
                    : named + " cannot be shown to be viable: its member list cannot be read ("
                            + SysfsFiles.describe(unlisted.failure()) + ")");
        }
        for (String name : ((HostVfio.GroupListing.Listed) listing).names()) {
            if (!SysfsFiles.isPciAddress(name)) {
                return Verdict.Nothing.unlisted(named + " cannot be handed to a VM: it lists \""
                        + SysfsFiles.printable(name) + "\", which is not a PCI function");
            }
            addresses.add(PciAddress.parse(name));
        }
        if (addresses.isEmpty()) {
            return Verdict.Nothing.unlisted(named + " cannot be shown to be viable: it lists no functions");
        }
        addresses.sort(null);
        List<String> members = new ArrayList<>(addresses.size());
        for (PciAddress address : addresses) {
            members.add(address.toString());
        }
        members = List.copyOf(members);
        List<Path> candidates = new ArrayList<>(2);
        for (String member : members) {
            String spoils;
            try {
                spoils = judgeMember(member, bus.resolve(member), candidates);
            } catch (NoSuchFileException e) {
                spoils = "cannot be shown to be viable: " + member + " in it vanished or its bus link dangles";
            } catch (IOException e) {
                spoils = "cannot be shown to be viable: " + member + " in it cannot be read ("
                        + SysfsFiles.describe(e) + ")";
            }
            if (spoils != null) {
                return new Verdict.Nothing(members, named + " " + spoils + " (QEMU refuses a group unless every"
                        + " function in it but its PCI bridges is on a VFIO driver)");
            }
        }
        return choose(named, members, candidates);
    }

    /**
     * Checks one member, adding it to {@code candidates} when it is an NVIDIA function on VFIO that is no VF.
     *
     * @return what keeps the group from being viable, a clause after the group's name; null when this member is fine
     */
    private String judgeMember(String member, Path dir, List<Path> candidates) throws IOException {
        String driver = PciBus.driver(host, dir);
        boolean bound = driver != null && PciBus.driverPresent(host, dir);
        if (bound && PassthroughSource.VFIO_DRIVERS.contains(driver)) {
            if (isNvidia(dir) && !host.files().exists(dir, "physfn", host.scanScope(), LinkOption.NOFOLLOW_LINKS)) {
                candidates.add(dir);
            }
            return null;
        }
        int classCode;
        try {
            classCode = pciClass(dir);
        } catch (IOException e) {
            return "cannot be shown to be viable: " + member + (bound ? " (bound to " + driver + ")" : " (no driver)")
                    + " may be no PCI bridge, as its " + SysfsFiles.describe(e);
        }
        if (classCode >> 8 == PCI_BRIDGE) {
            return null;
        }
        return "is not viable: " + member + (bound ? " is bound to " + driver + ", not to a VFIO driver"
                : " has no driver");
    }

    /**
     * Whether a member on VFIO is NVIDIA's. One whose vendor cannot be read is not: it keeps the group viable (it is on
     * VFIO), and the passthrough source skips it for its vendor, so it could never be the advertised one.
     */
    private boolean isNvidia(Path dir) {
        try {
            return PciBus.vendor(host, dir).equals(PciBus.NVIDIA_VENDOR);
        } catch (IOException e) {
            return false;
        }
    }

    /** The display-class candidate with the lowest BDF, else the lowest-BDF candidate. */
    private Verdict choose(String named, List<String> members, List<Path> candidates) {
        if (candidates.isEmpty()) {
            return new Verdict.Nothing(members, named + " has no NVIDIA function on a VFIO driver to advertise");
        }
        if (candidates.size() > 1) {
            for (Path candidate : candidates) {
                int classCode;
                try {
                    classCode = pciClass(candidate);
                } catch (IOException e) {
                    return new Verdict.Nothing(members, "cannot tell which function of " + named + " to advertise: "
                            + candidate.getFileName() + "'s " + SysfsFiles.describe(e));
                }
                if (classCode >> 16 == DISPLAY) {
                    return new Verdict.Advertise(members, candidate.getFileName().toString());
                }
            }
        }
        return new Verdict.Advertise(members, candidates.get(0).getFileName().toString());
    }

    /** A function's 24-bit class code from {@code class}: {@code 0x} and six hex digits ({@code 0x030200}). */
    private int pciClass(Path dir) throws IOException {
        String text = SysfsFiles.readStripped(host, dir, "class");
        if (text.length() != 8 || text.charAt(0) != '0' || (text.charAt(1) != 'x' && text.charAt(1) != 'X')
                || !SysfsFiles.isHex(text, 2)) {
            throw new IOException("class is not 0x and six hex digits: \"" + SysfsFiles.printable(text) + "\"");
        }
        return Integer.parseInt(text, 2, 8, 16);
    }
}
