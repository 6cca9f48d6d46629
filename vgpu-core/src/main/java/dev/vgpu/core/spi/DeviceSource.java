package dev.vgpu.core.spi;

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
}
