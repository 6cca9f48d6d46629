package dev.vgpu.kubelet.standin;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the stand-in kubelet knows: registrations, one connection and one device list per resource, update counts.
 *
 * <p>Every field is guarded by {@code lock}; every change signals {@code changed} so waiters re-test their
 * condition. {@code generation} counts detaches (kubelet restarts): a Register call that began in an older
 * generation cannot attach its connection.
 */
final class KubeletState {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<Registration> registrations = new ArrayList<>();
    private final Map<String, PluginConnection> connections = new HashMap<>();
    private final Map<String, List<DeviceState>> resources = new TreeMap<>();
    private final Map<String, Integer> updates = new HashMap<>();
    private long generation;
    private boolean closed;

    /** Records a Register call; returns the generation it belongs to. */
    long registered(Registration registration) {
        return update(() -> {
            registrations.add(registration);
            return generation;
        });
    }

    /** Makes {@code connection} the resource's current one, closing the previous; false when it came too late. */
    boolean attach(PluginConnection connection, long since) {
        PluginConnection previous = update(() -> {
            if (closed || since != generation) {
                return connection;
            }
            return connections.put(connection.resourceName, connection);
        });
        if (previous == connection) {
            return false;
        }
        if (previous != null) {
            previous.close();
        }
        return true;
    }

    /** A list arrived on a connection's stream. */
    void received(PluginConnection connection, List<DeviceState> devices) {
        update(() -> {
            if (connections.get(connection.resourceName) == connection) {
                resources.put(connection.resourceName, List.copyOf(devices));
                connection.streaming = true;
            }
            return updates.merge(connection.resourceName, 1, Integer::sum);
        });
    }

    /** A connection's stream ended. */
    void ended(PluginConnection connection) {
        update(() -> connection.streaming = false);
    }

    /** Forgets every connection and device list and returns the connections to close; optionally for good. */
    List<PluginConnection> detachAll(boolean close) {
        return update(() -> {
            generation++;
            closed |= close;
            List<PluginConnection> dropped = List.copyOf(connections.values());
            connections.clear();
            resources.clear();
            return dropped;
        });
    }

    boolean isClosed() {
        return read(() -> closed);
    }

    List<Registration> registrations() {
        return read(() -> List.copyOf(registrations));
    }

    Map<String, List<DeviceState>> resources() {
        return read(() -> Collections.unmodifiableMap(new TreeMap<>(resources)));
    }

    int listUpdates(String resourceName) {
        return read(() -> updates.getOrDefault(resourceName, 0));
    }

    Optional<PluginConnection> connection(String resourceName) {
        return read(() -> Optional.ofNullable(connections.get(resourceName)));
    }

    /** Waits until the condition holds, re-testing after every change; false when the timeout passed first. */
    boolean await(Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (!condition.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    private <T> T read(Supplier<T> reader) {
        lock.lock();
        try {
            return reader.get();
        } finally {
            lock.unlock();
        }
    }

    private <T> T update(Supplier<T> writer) {
        lock.lock();
        try {
            return writer.get();
        } finally {
            changed.signalAll();
            lock.unlock();
        }
    }
}
