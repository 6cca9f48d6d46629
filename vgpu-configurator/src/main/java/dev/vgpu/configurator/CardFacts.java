package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * One physical card that can host vendor-VFIO vGPUs, as read: an NVIDIA SR-IOV physical function on the
 * {@code nvidia} driver, its VFs and the types it is known to have.
 *
 * @param pf       the physical function's PCI address
 * @param deviceId its PCI device id ({@code 0x26b9})
 * @param totalVfs {@code sriov_totalvfs}: how many VFs it can have
 * @param numVfs   {@code sriov_numvfs}: how many it has now
 * @param vfs      its VFs (from its {@code virtfnN} links), in address order
 * @param types    what its types are called
 * @param problems why part of the card could not be read; a card with problems is never written
 */
public record CardFacts(PciAddress pf, int deviceId, int totalVfs, int numVfs, List<VfFacts> vfs, CardTypes types,
                        List<String> problems) {

    /** The PCI vendor id of every card the configurator handles. */
    public static final int NVIDIA_VENDOR = 0x10de;

    /** Checks, copies and sorts the VFs by address; an address may appear once. */
    public CardFacts {
        Objects.requireNonNull(pf, "pf");
        Objects.requireNonNull(types, "types");
        problems = List.copyOf(problems);
        List<VfFacts> sorted = new ArrayList<>(vfs);
        sorted.sort(Comparator.comparing(VfFacts::address));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).address().equals(sorted.get(i - 1).address())) {
                throw new IllegalArgumentException("card " + pf + " lists VF " + sorted.get(i).address() + " twice");
            }
        }
        vfs = List.copyOf(sorted);
        if (deviceId < 0 || deviceId > 0xffff || totalVfs < 0 || numVfs < 0) {
            throw new IllegalArgumentException("card " + pf + ": device id must be 16 bits and VF counts"
                    + " non-negative, got " + deviceId + ", " + totalVfs + ", " + numVfs);
        }
    }

    /**
     * Device and vendor as one number, {@code device << 16 | vendor}: what a vgpu-device-manager file's
     * {@code device-filter} names ({@code 0x26B910DE}).
     */
    public long deviceVendorId() {
        return (long) deviceId << 16 | NVIDIA_VENDOR;
    }

    /** The VF with this address, if it is one of this card's. */
    public Optional<VfFacts> vf(PciAddress address) {
        return vfs.stream().filter(vf -> vf.address().equals(address)).findFirst();
    }

    /** How many VFs hold each type id (none for 0), ascending by id. */
    public Map<Long, Integer> vgpuCounts() {
        Map<Long, Integer> counts = new TreeMap<>();
        for (VfFacts vf : vfs) {
            if (vf.configured()) {
                counts.merge(vf.typeId(), 1, Integer::sum);
            }
        }
        return counts;
    }

    /** The same card with other type names. */
    public CardFacts withTypes(CardTypes names) {
        return new CardFacts(pf, deviceId, totalVfs, numVfs, vfs, names, problems);
    }

    /** The same card with exactly the VFs in {@code inUse} marked in use. */
    public CardFacts withInUse(Set<PciAddress> inUse) {
        return new CardFacts(pf, deviceId, totalVfs, numVfs,
                vfs.stream().map(vf -> vf.withInUse(inUse.contains(vf.address()))).toList(), types, problems);
    }

    /**
     * True when {@code other} shows the same configuration: the same VF count and each VF the same type. Catalogs,
     * names and in-use flags are not compared (they follow from the configuration, or are not the card's).
     */
    public boolean sameConfiguration(CardFacts other) {
        if (numVfs != other.numVfs || vfs.size() != other.vfs.size()) {
            return false;
        }
        for (int i = 0; i < vfs.size(); i++) {
            VfFacts mine = vfs.get(i);
            VfFacts theirs = other.vfs.get(i);
            if (!mine.address().equals(theirs.address()) || mine.typeId() != theirs.typeId()) {
                return false;
            }
        }
        return true;
    }

    /** Its configuration in words: {@code 4 VFs: 2 × "NVIDIA L40S-12Q" (type 1153), 2 free}. */
    public String describeConfiguration() {
        if (numVfs == 0 && vfs.isEmpty()) {
            return "no VFs enabled";
        }
        List<String> parts = new ArrayList<>();
        vgpuCounts().forEach((id, count) -> parts.add(count + " × " + types.describe(id)));
        long unconfigured = vfs.stream().filter(vf -> !vf.configured()).count();
        if (unconfigured > 0) {
            parts.add(unconfigured + " without a vGPU");
        }
        return vfs.size() + " VFs: " + String.join(", ", parts);
    }
}
