package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.ScanScope;
import java.io.IOException;

/**
 * The outcome of one read that several sources make in a scan, kept in the {@link Host#scanScope() scan scope}
 * so that the file is read once and every source sees the same answer: the value, or the failure.
 *
 * <p>The failure is the {@link IOException} the first reader got, thrown again to every later reader so that
 * they take exactly the branch they would have taken reading the file themselves; nobody may modify it (no
 * {@code addSuppressed}, no {@code initCause}).
 *
 * @param value   what the read answered (may be null where the read says "nothing", e.g. no driver bound)
 * @param failure why the read failed; null when it answered
 * @param <T>     an immutable type
 */
record SharedRead<T>(T value, IOException failure) {

    /** A read of the host that may fail. */
    @FunctionalInterface
    interface Reader<T> {
        T read() throws IOException;
    }

    /** A scan-scope key that is its own read: it holds everything the read needs. */
    interface Key<T> {
        T read() throws IOException;
    }

    /** Reads a {@link Key}; one function for every key, so that asking allocates nothing beyond the key. */
    private static final java.util.function.Function<Key<?>, SharedRead<?>> READ_KEY = key -> of(key::read);

    /**
     * {@link #once(Host, Object, Reader)} for a key that reads itself: the same sharing, without a reader made per
     * call.
     */
    @SuppressWarnings("unchecked") // a Key<T> maps to a SharedRead<T>: the scope keeps what READ_KEY made for it
    static <T> T once(Host host, Key<T> key) throws IOException {
        SharedRead<T> outcome = (SharedRead<T>) host.scanScope().computeIfAbsent(key, READ_KEY);
        if (outcome.failure != null) {
            throw outcome.failure;
        }
        return outcome.value;
    }

    /**
     * Answers a read once per key and scan: the first call reads, later calls (from any source of the scan) get
     * the same value or the same failure. Under {@link ScanScope#none()} every call reads.
     *
     * @param key a record naming the read, private to this module, e.g. {@code new DriverLink(dir)}
     */
    static <T> T once(Host host, Object key, Reader<T> reader) throws IOException {
        SharedRead<T> outcome = host.scanScope().computeIfAbsent(key, k -> of(reader));
        if (outcome.failure != null) {
            throw outcome.failure;
        }
        return outcome.value;
    }

    private static <T> SharedRead<T> of(Reader<T> reader) {
        try {
            return new SharedRead<>(reader.read(), null);
        } catch (IOException e) {
            return new SharedRead<>(null, e);
        }
    }
}
