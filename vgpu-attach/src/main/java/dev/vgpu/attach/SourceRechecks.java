package dev.vgpu.attach;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the source that found a device whether it is still what was advertised ({@link DeviceSource#recheck}),
 * for a handover and the adapters' periodic health checks. A device of a source that was not given is trusted.
 * A source whose recheck throws or answers nothing is treated as a changed device: handing out something nobody
 * can vouch for is worse than refusing it. Immutable and thread-safe (sources must be, by their contract).
 */
final class SourceRechecks {

    private static final Logger LOG = LoggerFactory.getLogger(SourceRechecks.class);

    private final Host host;
    private final Map<String, DeviceSource> bySource;

    SourceRechecks(Host host, Collection<? extends DeviceSource> sources) {
        this.host = host;
        Map<String, DeviceSource> map = new HashMap<>();
        for (DeviceSource source : sources) {
            map.putIfAbsent(source.name(), source);
        }
        this.bySource = Map.copyOf(map);
    }

    /** Whether the device is still what its source advertised. Never throws (but for a JVM error). */
    DeviceCheck recheck(Device device) {
        return recheck(device, host);
    }

    /** {@link #recheck(Device)} on {@code scoped}, this host with the scope of one handover. */
    DeviceCheck recheck(Device device, Host scoped) {
        DeviceSource source = bySource.get(device.source());
        if (source == null) {
            return DeviceCheck.same();
        }
        try {
            DeviceCheck check = source.recheck(scoped, device);
            return check != null ? check : DeviceCheck.changed("as advertised", "not checkable (source "
                    + source.name() + " answered nothing)");
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            LOG.warn("Source {} failed to recheck device {}: {}", source.name(), device.id(), e.toString());
            return DeviceCheck.changed("as advertised", "not checkable (" + e + ")");
        }
    }
}
