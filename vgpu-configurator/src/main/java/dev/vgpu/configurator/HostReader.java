package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.util.Set;

/**
 * Reads what the {@link Planner} plans from: the host's vendor-VFIO cards. {@link
 * dev.vgpu.configurator.sysfs.SysfsVgpuHost} reads sysfs under a host root; a test may answer from values.
 * Implementations must be safe to call from the thread that applies; they are not called concurrently by the
 * configurator.
 */
public interface HostReader {

    /**
     * Every card of the host that can host vendor-VFIO vGPUs. A card that cannot be read whole is returned with
     * {@link CardFacts#problems() problems}, never left out; a function whose vendor, driver or
     * {@code sriov_totalvfs} cannot be read is not taken for a card.
     *
     * @param inUse the VFs to mark in use
     * @throws IOException only when the host's PCI functions cannot be listed at all
     */
    HostFacts read(Set<PciAddress> inUse) throws IOException;

    /**
     * One card, read now.
     *
     * @param pf    the card's physical function
     * @param inUse the VFs to mark in use
     * @throws java.nio.file.NoSuchFileException when the host has no such function
     * @throws IOException when the function is not a card that can host vendor-VFIO vGPUs, or cannot be read
     */
    CardFacts readCard(PciAddress pf, Set<PciAddress> inUse) throws IOException;
}
