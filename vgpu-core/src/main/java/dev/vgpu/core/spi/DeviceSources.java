package dev.vgpu.core.spi;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads {@link DeviceSource}s through {@link ServiceLoader} in a deterministic order: by
 * {@link DeviceSource#order()}, then by name. A provider that fails to load is logged and left out; the
 * others still load. Two providers with one name: the first in that order is kept.
 */
public final class DeviceSources {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceSources.class);
    private static final Comparator<DeviceSource> ORDER =
            Comparator.comparingInt(DeviceSource::order).thenComparing(DeviceSource::name);

    private DeviceSources() {
    }

    /** Every source visible to this module's layer, or the thread context class loader on the class path. */
    public static List<DeviceSource> load() {
        return load(ServiceLoader.load(DeviceSource.class), Optional.empty());
    }

    /**
     * Sources visible to a class loader, optionally only those named in an allow-list.
     *
     * @param allowList source names to keep; empty keeps every source
     */
    public static List<DeviceSource> load(ClassLoader loader, Optional<Set<String>> allowList) {
        return load(ServiceLoader.load(DeviceSource.class, loader), allowList);
    }

    /** Orders, de-duplicates and filters sources found by a service loader. */
    static List<DeviceSource> load(ServiceLoader<DeviceSource> serviceLoader, Optional<Set<String>> allowList) {
        List<DeviceSource> found = new ArrayList<>();
        Iterator<DeviceSource> it = serviceLoader.iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                found.add(it.next());
            } catch (ServiceConfigurationError e) {
                LOG.warn("device source provider could not be loaded, continuing without it: {}", e.getMessage());
            }
        }
        return select(found, allowList);
    }

    /**
     * Orders sources, keeps the first of each name, and applies an allow-list.
     *
     * @param allowList source names to keep; empty keeps every source
     */
    public static List<DeviceSource> select(List<DeviceSource> sources, Optional<Set<String>> allowList) {
        List<DeviceSource> sorted = new ArrayList<>(sources);
        sorted.sort(ORDER);
        Map<String, DeviceSource> byName = new LinkedHashMap<>();
        for (DeviceSource source : sorted) {
            DeviceSource earlier = byName.putIfAbsent(source.name(), source);
            if (earlier != null) {
                LOG.warn("two device sources are named \"{}\": keeping {}, ignoring {}", source.name(),
                        earlier.getClass().getName(), source.getClass().getName());
            }
        }
        allowList.ifPresent(allowed -> {
            for (String name : allowed) {
                if (!byName.containsKey(name)) {
                    LOG.warn("device source \"{}\" was asked for but is not on the class or module path", name);
                }
            }
            byName.keySet().retainAll(allowed);
        });
        return List.copyOf(byName.values());
    }
}
