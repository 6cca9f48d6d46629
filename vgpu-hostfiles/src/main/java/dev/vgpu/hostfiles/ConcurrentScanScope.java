package dev.vgpu.hostfiles;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * {@link ScanScope#fresh()}: one slot per key in a concurrent map; a slot computes its value under its own lock,
 * so a computation (file I/O) blocks only callers of the same key and may use the scope for other keys.
 */
final class ConcurrentScanScope implements ScanScope {

    /** {@link ScanScope#none()}: computes every time, keeps nothing. */
    static final ScanScope NONE = new ScanScope() {
        @Override
        public <K, V> V computeIfAbsent(K key, Function<? super K, ? extends V> compute) {
            Objects.requireNonNull(key, "key");
            return checked(key, compute.apply(key));
        }

        @Override
        public String toString() {
            return "ScanScope.none()";
        }
    };

    /** Shared by every thread of the scan; slots are added, never removed. */
    private final Map<Object, Slot> slots;

    /** An empty scope of the default size. */
    ConcurrentScanScope() {
        this(16);
    }

    /**
     * An empty scope sized for about {@code expectedKeys} keys (a scan round passes the last scan's count), so
     * that a scan of thousands of functions does not grow its map a dozen times.
     */
    ConcurrentScanScope(int expectedKeys) {
        slots = new ConcurrentHashMap<>(Math.max(16, expectedKeys));
    }

    /** How many keys the scope holds. */
    int size() {
        return slots.size();
    }

    @Override
    public <K, V> V computeIfAbsent(K key, Function<? super K, ? extends V> compute) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(compute, "compute");
        Slot slot = slots.get(key);
        if (slot == null) {
            Slot fresh = new Slot();
            Slot known = slots.putIfAbsent(key, fresh);
            slot = known != null ? known : fresh;
        }
        return slot.get(key, compute);
    }

    @Override
    public String toString() {
        return "ScanScope[" + slots.size() + " keys]";
    }

    private static <V> V checked(Object key, V value) {
        // Not requireNonNull(value, supplier): the supplier capturing the key would be made on every computation.
        if (value == null) {
            throw new NullPointerException("the scan scope computation for key " + key + " returned null");
        }
        return value;
    }

    /** One key's value; {@code value} is written once, under the slot's lock, by the thread that computes it. */
    private static final class Slot {
        private volatile Object value;
        /** True while the thread holding this slot's lock computes; only read and written under the lock. */
        private boolean computing;

        @SuppressWarnings("unchecked") // a key type maps to one value type, as ScanScope asks of its callers
        <K, V> V get(K key, Function<? super K, ? extends V> compute) {
            Object known = value;
            if (known != null) {
                return (V) known;
            }
            synchronized (this) {
                if (value != null) {
                    return (V) value;
                }
                if (computing) {
                    throw new IllegalStateException("the scan scope value for key " + key + " depends on itself");
                }
                computing = true;
                try {
                    V computed = checked(key, compute.apply(key));
                    value = computed;
                    return computed;
                } finally {
                    computing = false;
                }
            }
        }
    }
}
