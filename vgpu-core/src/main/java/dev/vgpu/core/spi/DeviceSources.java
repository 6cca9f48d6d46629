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
 * {@link DeviceSource#order()}, then by name (ties keep the service loader's order). A provider that fails to
 * load is logged and left out; the others still load. Two providers with one name: the first in that order is
 * kept.
 */
public final class DeviceSources {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceSources.class);
    private static final Comparator<Candidate> ORDER =
            Comparator.comparingInt(Candidate::order).thenComparing(Candidate::name);
    private static final int MAX_LOAD_FAILURES = 100;

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
        int failures = 0;
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                found.add(it.next());
            } catch (ServiceConfigurationError e) {
                LOG.warn("device source provider could not be loaded, continuing without it: {}{}", e.getMessage(),
                        e.getCause() == null ? "" : " (" + e.getCause() + ")");
                if (++failures >= MAX_LOAD_FAILURES) {
                    // ServiceLoader only promises a best effort to move past a failure; never spin on one
                    LOG.warn("giving up on device source providers after {} failures", failures);
                    break;
                }
            }
        }
        return select(found, allowList);
    }

    /**
     * Orders sources, keeps the first of each name, and applies an allow-list. A source whose {@code name()} or
     * {@code order()} throws, or whose name is not 1-63 printable ASCII characters without whitespace,
     * {@code /} or {@code ,}, is logged and left out.
     *
     * @param allowList source names to keep; empty keeps every source
     */
    public static List<DeviceSource> select(List<DeviceSource> sources, Optional<Set<String>> allowList) {
        List<Candidate> candidates = new ArrayList<>();
        for (DeviceSource source : sources) {
            String name;
            int order;
            try {
                name = source.name();
                order = source.order();
            } catch (RuntimeException e) {
                LOG.warn("device source {} failed to give its name or order, leaving it out: {}",
                        source.getClass().getName(), e.toString());
                continue;
            }
            if (!isValidName(name)) {
                LOG.warn("device source {} has an unusable name \"{}\" (1-63 printable ASCII characters without "
                        + "whitespace, '/' or ','), leaving it out", source.getClass().getName(), name);
                continue;
            }
            candidates.add(new Candidate(source, name, order));
        }
        candidates.sort(ORDER);
        Map<String, DeviceSource> byName = new LinkedHashMap<>();
        for (Candidate candidate : candidates) {
            DeviceSource earlier = byName.putIfAbsent(candidate.name(), candidate.source());
            if (earlier != null) {
                LOG.warn("two device sources are named \"{}\": keeping {}, ignoring {}", candidate.name(),
                        earlier.getClass().getName(), candidate.source().getClass().getName());
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

    private static boolean isValidName(String name) {
        if (name == null || name.isEmpty() || name.length() > 63) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '/' || c == ',') {
                return false;
            }
        }
        return true;
    }

    /** A source with the name and order it gave once. */
    private record Candidate(DeviceSource source, String name, int order) {
    }
}
