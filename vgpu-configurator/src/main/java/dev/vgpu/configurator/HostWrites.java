package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.util.Objects;

/**
 * The configurator's writes, the whole of them: a card's VF count and a VF's vGPU type. {@link
 * dev.vgpu.configurator.sysfs.SysfsVgpuHost} writes sysfs; vgpu-testing's {@code VgpuManagerSimulator} applies the
 * driver's rules to a simulated host ({@code HostWrites.of(simulator::writeVfCount, simulator::writeType)}).
 *
 * <p>A write either takes effect or throws; the {@link Applier} reads every write back through its
 * {@link HostReader}, so a write that returns without taking effect is caught too. Not called concurrently by the
 * configurator.
 */
public interface HostWrites {

    /**
     * Writes a card's {@code sriov_numvfs}: enables that many VFs when it has none, or disables them all with 0.
     *
     * @throws IOException when the kernel or driver refuses, e.g. VFs already enabled or a VF still in use
     */
    void writeVfCount(PciAddress pf, int count) throws IOException;

    /**
     * Writes a VF's {@code nvidia/current_vgpu_type}: a type id creates that vGPU, 0 destroys the one it holds.
     *
     * @throws IOException when the driver refuses, e.g. a type that is not creatable on that VF now
     */
    void writeType(PciAddress vf, long typeId) throws IOException;

    /** Writes made of two functions, e.g. method references to a simulator's. */
    static HostWrites of(VfCountWrite vfCount, TypeWrite type) {
        Objects.requireNonNull(vfCount, "vfCount");
        Objects.requireNonNull(type, "type");
        return new HostWrites() {
            @Override
            public void writeVfCount(PciAddress pf, int count) throws IOException {
                vfCount.write(pf, count);
            }

            @Override
            public void writeType(PciAddress vf, long typeId) throws IOException {
                type.write(vf, typeId);
            }
        };
    }

    /** The shape of {@link #writeVfCount}. */
    @FunctionalInterface
    interface VfCountWrite {
        /** See {@link HostWrites#writeVfCount}. */
        void write(PciAddress pf, int count) throws IOException;
    }

    /** The shape of {@link #writeType}. */
    @FunctionalInterface
    interface TypeWrite {
        /** See {@link HostWrites#writeType}. */
        void write(PciAddress vf, long typeId) throws IOException;
    }
}
