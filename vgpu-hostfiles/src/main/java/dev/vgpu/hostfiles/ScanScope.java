package dev.vgpu.hostfiles;

import java.util.function.Function;

/**
 * A memo that lives for one scan, so that sources reading the same file of the same host in that scan read it
 * once and see one answer, and the owner of that scan's read buffers ({@link HostFiles}). Every source of a scan gets
 * the same scope (core's {@code Host.scanScope()}); the next scan gets a fresh one, so nothing read in one scan is
 * ever seen by another.
 *
 * <p>Use a key type private to your module (a record holding what identifies the read, e.g. the file's
 * {@code Path}), so that no other module's key can equal yours and each key type always maps to one value type.
 * Values must be immutable (they are handed to every source of the scan, on any thread) and non-null; to share a
 * failure as well, wrap it in the value (a small record of "value or why not") instead of throwing:
 * <pre>{@code
 * private record DriverKey(Path function) { }
 * private record DriverLink(String name, IOException failure) { }
 *
 * DriverLink driver = host.scanScope().computeIfAbsent(new DriverKey(dir), key -> readDriverLink(key.function()));
 * }</pre>
 *
 * <p>Implementations are safe for concurrent use. {@link #fresh()} computes each key at most once while the
 * computation returns a value: concurrent callers of one key wait for the first one's answer, different keys do
 * not wait for each other, and a computation may itself use the scope for other keys. {@link #none()} keeps
 * nothing: every call computes (what a host tied to no scan gives sources). A scan round
 * ({@link HostFiles#openRound}) is a fresh scope that its thread holds open for the whole scan.
 */
public interface ScanScope {

    /**
     * The value memoized for a key in this scan, computing it first if it has none.
     *
     * <p>When {@code compute} throws, nothing is kept and the exception reaches the caller; a later call computes
     * again.
     *
     * @param key     what identifies the value within the scan; non-null, with value-based {@code equals}
     * @param compute makes the value from the key; must return a non-null immutable value
     * @return the value every caller of this scope gets for an equal key
     * @throws NullPointerException  when the key or the computed value is null
     * @throws IllegalStateException when computing a key needs the value of the same key
     */
    <K, V> V computeIfAbsent(K key, Function<? super K, ? extends V> compute);

    /** A new, empty scope for one scan. */
    static ScanScope fresh() {
        return new ConcurrentScanScope();
    }

    /** The scope that keeps nothing: each call computes its value afresh. */
    static ScanScope none() {
        return ConcurrentScanScope.NONE;
    }
}
