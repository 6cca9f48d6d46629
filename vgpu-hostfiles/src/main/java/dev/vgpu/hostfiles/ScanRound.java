package dev.vgpu.hostfiles;

import dev.vgpu.hostfiles.internal.FileReader;
import java.util.function.Function;

/**
 * The scope of one scan that a thread runs from start to end ({@link HostFiles#openRound}): a fresh
 * {@link ScanScope}, and while it is open, the reader that thread's reads of its {@link HostFiles} go through, which
 * keeps the descriptors of the directories it lists so that later reads below them walk only their own names
 * (docs/BUILD.md, "Kept directories"). {@link #close()} closes those descriptors and gives the reader back.
 * <pre>{@code
 * try (ScanRound scope = files.openRound(expectedKeys)) {
 *     ... every source reads with scope ...
 * }
 * }</pre>
 *
 * <p>Threads: the scope's memo is safe for any thread of the scan. The reader belongs to the thread that opened the
 * round (its owner), which alone takes it, uses it and gives it back in {@link #close()}; reads of other threads with
 * this scope borrow readers of their own, by whole paths.
 */
public final class ScanRound implements ScanScope, AutoCloseable {

    private final ConcurrentScanScope memo;
    private final HostFiles files;
    private final Thread owner;
    /** The owner's reader while it reads; null before its first native read and after close. Owner thread only. */
    private FileReader reader;
    /** Owner thread only. */
    private boolean closed;

    ScanRound(HostFiles files, int expectedKeys) {
        this.memo = new ConcurrentScanScope(expectedKeys);
        this.files = files;
        this.owner = Thread.currentThread();
    }

    @Override
    public <K, V> V computeIfAbsent(K key, Function<? super K, ? extends V> compute) {
        return memo.computeIfAbsent(key, compute);
    }

    /** How many keys the round's memo holds (a scanner sizes the next round's by it). */
    public int keys() {
        return memo.size();
    }

    /**
     * The round's reader when the caller is its owner reading through {@code asker}, taken from {@code asker}'s pool
     * at the first such read; null for any other caller, or once closed.
     */
    FileReader readerFor(HostFiles asker, ReaderPool pool) {
        if (asker != files || Thread.currentThread() != owner || closed) {
            return null;
        }
        if (reader == null) {
            reader = pool.borrow();
            reader.round(true);
        }
        return reader;
    }

    /** Ends the round on its owner thread: the reader's kept descriptors are closed and the reader given back. */
    @Override
    public void close() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("a scan round is closed by the thread that opened it, " + owner.getName());
        }
        if (closed) {
            return;
        }
        closed = true;
        if (reader != null) {
            FileReader held = reader;
            reader = null;
            held.round(false);
            files.giveBack(held);
        }
    }

    @Override
    public String toString() {
        return "ScanRound[" + memo.size() + " keys]";
    }
}
