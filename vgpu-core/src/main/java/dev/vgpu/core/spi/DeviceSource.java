package dev.vgpu.core.spi;

import dev.vgpu.core.Device;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;

/**
 * A provider of devices, found through {@link java.util.ServiceLoader} (declare it both with
 * {@code provides dev.vgpu.core.spi.DeviceSource with ...} in {@code module-info.java} and in
 * {@code META-INF/services/dev.vgpu.core.spi.DeviceSource}).
 *
 * <p>A minimal source:
 * <pre>{@code
 * public final class LabSource implements DeviceSource {
 *     public String name() { return "lab"; }
 *     public Discovery discover(Host host) {
 *         ResourceName name = ResourceName.sanitize("LAB_GPU").orElseThrow();
 *         return Discovery.builder()
 *                 .add(Device.builder("0000:65:00.0", name, name(), Attachment.VFIO_PCI).iommuGroup("7").build())
 *                 .build();
 *     }
 * }
 * }</pre>
 *
 * <p>Implementations must be stateless or thread-safe: a scan may run on any thread, never two at once for
 * the same loader.
 */
public interface DeviceSource {

    /** A short, unique, stable name such as {@code passthrough}; used in logs, JSON and allow-lists. */
    String name();

    /**
     * Where this source stands among others: lower runs first and wins conflicts over device ids and resource
     * names. Built-in sources use 10, 20 and 30; the default for others is 100.
     */
    default int order() {
        return 100;
    }

    /**
     * Scans the host once. One bad device is a {@link Discovery#skipped() skip} with a reason, never an
     * exception.
     *
     * @throws IOException only when the host cannot be read at all (for example the root is missing)
     */
    Discovery discover(Host host) throws IOException;

    /**
     * Is a device this source advertised still what it was? Called before the device is handed to a VM
     * (Allocate) and by the periodic health check, which marks a changed device unhealthy until it is back to
     * what was advertised. A source compares what it recorded in {@link Device#identity()} with what the host
     * shows now (the built-in sources re-read a VF's vGPU type, an mdev's type, a GPU's vendor and device id).
     *
     * <p>Must be cheap (a few small reads), must not block, and should not throw: a throw is treated as a
     * change ("cannot be checked"). The default trusts the snapshot and answers {@link DeviceCheck#same()}, so a
     * source without an identity to re-check loses nothing; the IOMMU group is re-checked before every handover
     * for every source ({@code dev.vgpu.attach.Handovers}, which asks this method too).
     *
     * @param host   the host the device was found on, never with a scan's scope: a health check gives
     *               {@link ScanScope#none()} (every call reads anew), a handover one fresh scope for all of its
     *               re-checks (a file they share is read once per handover)
     * @param device a device this source returned from {@link #discover}
     */
    default DeviceCheck recheck(Host host, Device device) {
        return DeviceCheck.same();
    }
}
