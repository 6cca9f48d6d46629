package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.Map;
import java.util.Objects;

/**
 * One virtual function of a card as read: its vGPU type now and what it could be given now.
 *
 * @param address   the VF's PCI address
 * @param index     N of the PF's {@code virtfnN} link to it
 * @param typeId    {@code nvidia/current_vgpu_type}: the vGPU type it holds, {@code 0} for none
 * @param creatable its {@code nvidia/creatable_vgpu_types} now: id → profile name (empty on a configured VF or a
 *                  full card)
 * @param inUse     whether a VM or a pending allocation holds it (a kubelet or DRA checkpoint names it): the
 *                  configurator never writes it
 */
public record VfFacts(PciAddress address, int index, long typeId, Map<Long, String> creatable, boolean inUse) {

    /** Checks and copies. */
    public VfFacts {
        Objects.requireNonNull(address, "address");
        creatable = Map.copyOf(creatable);
        if (index < 0 || typeId < 0) {
            throw new IllegalArgumentException("VF " + address + ": index and type id must be non-negative, got "
                    + index + " and " + typeId);
        }
    }

    /** True when it holds a vGPU. */
    public boolean configured() {
        return typeId != 0;
    }

    /** True when it holds no vGPU and is not in use: a new vGPU may be created on it. */
    public boolean free() {
        return typeId == 0 && !inUse;
    }

    /** True when its catalog lists the type now. */
    public boolean lists(long id) {
        return creatable.containsKey(id);
    }

    /** The same VF with another in-use flag. */
    public VfFacts withInUse(boolean used) {
        return new VfFacts(address, index, typeId, creatable, used);
    }
}
