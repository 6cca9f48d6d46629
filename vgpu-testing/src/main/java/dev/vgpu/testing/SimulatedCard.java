package dev.vgpu.testing;

import dev.vgpu.core.PciAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A card the {@link VgpuManagerSimulator} simulates: an SR-IOV PF on the {@code nvidia} driver with a framebuffer,
 * a VF limit and its vGPU types. Its VFs sit at the addresses {@link SysfsTree#vfAddress} gives, VF {@code i} in
 * IOMMU group {@code firstGroup + i}.
 * <pre>{@code
 * SimulatedCard card = SimulatedCard.l40s("0000:41:00.0").withTotalVfs(8).withEnabledVfs(0);
 * }</pre>
 *
 * @param pf            the PF's address
 * @param deviceId      its PCI device id (the VFs report the same)
 * @param framebufferGb its framebuffer, in GB
 * @param totalVfs      {@code sriov_totalvfs}, 1 to 64
 * @param types         its vGPU types, at least one; ids and names unique
 * @param enabledVfs    VFs enabled when the simulator is created: 0 or {@code totalVfs}
 * @param numa          the NUMA node of the PF and its VFs; -1 for unknown
 * @param firstGroup    the IOMMU group of VF 0
 * @param catalogOnPf   whether the PF has {@code nvidia/creatable_vgpu_types} too (unverified on real hosts)
 */
public record SimulatedCard(String pf, int deviceId, int framebufferGb, int totalVfs, List<SimulatedType> types,
                            int enabledVfs, int numa, int firstGroup, boolean catalogOnPf) {

    /** The most VFs a simulated card has (its IOMMU groups then fit in a block of 64). */
    public static final int MAX_VFS = 64;

    /** Checks and copies; the address is written the kernel's way. */
    public SimulatedCard {
        pf = PciAddress.parse(Objects.requireNonNull(pf, "pf")).toString();
        types = List.copyOf(types);
        if (deviceId < 0 || deviceId > 0xffff || framebufferGb < 1 || totalVfs < 1 || totalVfs > MAX_VFS
                || types.isEmpty() || firstGroup < 0 || numa < -1) {
            throw new IllegalArgumentException("card " + pf + ": a 16-bit device id, a framebuffer, 1 to " + MAX_VFS
                    + " VFs, at least one type, a group and a NUMA node of -1 or more are needed");
        }
        if (enabledVfs != 0 && enabledVfs != totalVfs) {
            throw new IllegalArgumentException("card " + pf + " starts with 0 or all " + totalVfs + " VFs enabled, not "
                    + enabledVfs);
        }
        Set<Long> ids = new HashSet<>();
        Set<String> names = new HashSet<>();
        for (SimulatedType type : types) {
            if (!ids.add(type.id()) || !names.add(type.name())) {
                throw new IllegalArgumentException("card " + pf + " has type " + type.id() + " \"" + type.name()
                        + "\" twice");
            }
            if (type.framebufferGb() > framebufferGb) {
                throw new IllegalArgumentException("type \"" + type.name() + "\" takes more than card " + pf + "'s "
                        + framebufferGb + " GB");
            }
        }
        SysfsTree.vfAddress(pf, totalVfs - 1);
    }

    /**
     * A card with every VF enabled, no NUMA node, groups from {@code 1000 + 64 × bus}, and a PF catalog.
     */
    public static SimulatedCard of(String pf, int deviceId, int framebufferGb, int totalVfs,
                                   List<SimulatedType> types) {
        int bus = PciAddress.parse(pf).bus();
        return new SimulatedCard(pf, deviceId, framebufferGb, totalVfs, types, totalVfs, -1, 1000 + MAX_VFS * bus,
                true);
    }

    /**
     * An NVIDIA L40S (48 GB, device {@code 0x26b9}) with 16 VFs and the Q, A and B profiles, with the type ids one
     * published host listed (illustrative: ids are card-local and may differ with the driver).
     */
    public static SimulatedCard l40s(String pf) {
        String[] q = {"1Q", "2Q", "3Q", "4Q", "6Q", "8Q", "12Q", "16Q", "24Q", "48Q"};
        String[] a = {"1A", "2A", "3A", "4A", "6A", "8A", "12A", "16A", "24A", "48A"};
        List<SimulatedType> types = new java.util.ArrayList<>(List.of(SimulatedType.of(1145, "NVIDIA L40S-1B"),
                SimulatedType.of(1146, "NVIDIA L40S-2B"), SimulatedType.of(2164, "NVIDIA L40S-3B")));
        for (int i = 0; i < q.length; i++) {
            types.add(SimulatedType.of(1147 + i, "NVIDIA L40S-" + q[i]));
            types.add(SimulatedType.of(1157 + i, "NVIDIA L40S-" + a[i]));
        }
        return of(pf, 0x26b9, 48, 16, types);
    }

    /** The same card with {@code sriov_totalvfs} (and the VFs enabled at the start, when they are) changed. */
    public SimulatedCard withTotalVfs(int total) {
        return new SimulatedCard(pf, deviceId, framebufferGb, total, types, enabledVfs == 0 ? 0 : total, numa,
                firstGroup, catalogOnPf);
    }

    /** The same card starting with 0 or all VFs enabled. */
    public SimulatedCard withEnabledVfs(int enabled) {
        return new SimulatedCard(pf, deviceId, framebufferGb, totalVfs, types, enabled, numa, firstGroup, catalogOnPf);
    }

    /** The same card on another NUMA node. */
    public SimulatedCard withNuma(int node) {
        return new SimulatedCard(pf, deviceId, framebufferGb, totalVfs, types, enabledVfs, node, firstGroup,
                catalogOnPf);
    }

    /** The same card with or without a PF catalog. */
    public SimulatedCard withCatalogOnPf(boolean present) {
        return new SimulatedCard(pf, deviceId, framebufferGb, totalVfs, types, enabledVfs, numa, firstGroup, present);
    }

    /** The type with this id, or null. */
    SimulatedType type(long id) {
        return types.stream().filter(type -> type.id() == id).findFirst().orElse(null);
    }
}
