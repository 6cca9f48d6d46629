package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.core.Plan;
import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugins one manager serves, by resource, with the snapshot Allocate reads, and how a plan changes them:
 * {@code Add} starts a plugin, {@code Update} swaps its device list (health kept for devices that stay), {@code Remove}
 * retires it. One log line per change; a change that fails is logged and the rest still apply.
 *
 * <p>Threads: owned by the manager's serial context, where every method runs but {@link #snapshot()} and
 * {@link #published()}, which any thread reads: the context replaces that pair as a whole, immutable, after each
 * change. Logs as the manager ({@code PluginManager - Added …}), which is what an operator reads.
 */
final class ServedPlugins {

    private static final Logger LOG = LoggerFactory.getLogger(PluginManager.class);

    /**
     * What other threads read, replaced as a whole by the context.
     *
     * @param snapshot the snapshot Allocate and preferred allocation read
     * @param plugins  the plugins serving now, by resource
     */
    private record Published(Snapshot snapshot, SortedMap<ResourceName, ResourcePlugin> plugins) {
    }

    private final Function<Resource, ResourcePlugin> newPlugin;
    private final SortedMap<ResourceName, ResourcePlugin> plugins = new TreeMap<>();
    private boolean closed;
    /** Written only by the context; read by any thread. */
    private volatile Published published = new Published(Snapshot.empty(), Collections.emptySortedMap());

    /** @param newPlugin makes the (not yet started) plugin of a resource an {@code Add} brings */
    ServedPlugins(Function<Resource, ResourcePlugin> newPlugin) {
        this.newPlugin = newPlugin;
    }

    /** The snapshot applied last; any thread. */
    Snapshot snapshot() {
        return published.snapshot();
    }

    /** The plugins serving now, by resource, as the context published them; any thread. */
    SortedMap<ResourceName, ResourcePlugin> published() {
        return published.plugins();
    }

    /** The plugins serving now (in the context only). */
    Collection<ResourcePlugin> values() {
        return plugins.values();
    }

    /** What leads from the snapshot applied last to {@code next}. */
    Plan plan(Snapshot next) {
        return Reconciler.plan(published.snapshot(), next);
    }

    /**
     * Makes {@code next} the snapshot Allocate reads, then applies the plan's changes in order.
     *
     * @return the blocking rest for the caller, outside the context: each removed plugin's server shutdown
     * @throws IllegalStateException after {@link #stopAll()}
     */
    List<Runnable> apply(Snapshot next, Plan plan) {
        if (closed) {
            throw new IllegalStateException("plugin manager is closed");
        }
        published = new Published(next, published.plugins());
        List<Runnable> rest = new ArrayList<>();
        for (Plan.Change change : plan.changes()) {
            try {
                change(change).ifPresent(rest::add);
            } catch (RuntimeException e) {
                LOG.error("Could not apply {} to {}: {}", change.getClass().getSimpleName(), change.resource(),
                        e.toString(), e);
            }
        }
        publishPlugins();
        return rest;
    }

    /** Whether {@link #stopAll()} ran. */
    boolean closed() {
        return closed;
    }

    /**
     * Stops every plugin (without retiring its resource: a restarted daemon registers it again); later applies are
     * refused.
     *
     * @return the blocking rest of each stop, for the caller outside the context
     */
    List<Runnable> stopAll() {
        closed = true;
        List<Runnable> rest = plugins.values().stream().map(ResourcePlugin::stop).toList();
        plugins.clear();
        publishPlugins();
        return rest;
    }

    /** One change; a {@code Remove} returns its server's shutdown. */
    private Optional<Runnable> change(Plan.Change change) {
        ResourcePlugin existing = plugins.get(change.resource());
        if (change instanceof Plan.Remove) {
            if (existing == null) {
                return Optional.empty();
            }
            plugins.remove(change.resource());
            Runnable shutdown = existing.retire();
            return Optional.of(() -> {
                shutdown.run();
                LOG.info("Removed {}", change.resource());
            });
        }
        Resource next = change instanceof Plan.Add add ? add.next() : ((Plan.Update) change).next();
        if (existing != null) {
            List<String> before = existing.advertised().devices().stream().map(Device::id).toList();
            existing.update(next);
            TreeSet<String> in = new TreeSet<>(next.ids());
            in.removeAll(before);
            TreeSet<String> out = new TreeSet<>(before);
            out.removeAll(next.ids());
            LOG.info("Updated {}: {} devices, in {}, out {}", next.name(), next.devices().size(), in, out);
            return Optional.empty();
        }
        ResourcePlugin plugin = newPlugin.apply(next);
        plugins.put(next.name(), plugin);
        plugin.start();
        LOG.info("Added {} with {} devices {}", next.name(), next.devices().size(), next.ids());
        return Optional.empty();
    }

    private void publishPlugins() {
        published = new Published(published.snapshot(), Collections.unmodifiableSortedMap(new TreeMap<>(plugins)));
    }
}
