package dev.vgpu.hostfiles;

import dev.vgpu.hostfiles.internal.FileReader;
import dev.vgpu.hostfiles.internal.FileReaderProvider;
import dev.vgpu.hostfiles.internal.KnownTexts;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The idle readers of one {@link HostFiles}: a call outside a scan round's thread borrows one and gives it back when it
 * returns, so the native buffers, and what a reader remembers of paths that failed, serve call after call instead of
 * being made for each. A few slots, no lock: a borrower that finds every slot empty gets a new reader, and a reader
 * given back to a full pool is dropped (it keeps no descriptor outside a round; the garbage collector frees its
 * buffers).
 */
final class ReaderPool {

    private static final int SLOTS = 4;

    private final FileReaderProvider provider;
    private final KnownTexts texts;
    private final AtomicReferenceArray<FileReader> idle = new AtomicReferenceArray<>(SLOTS);

    ReaderPool(FileReaderProvider provider, KnownTexts texts) {
        this.provider = provider;
        this.texts = texts;
    }

    /** An idle reader, or a new one; the caller alone uses it until {@link #giveBack}. */
    FileReader borrow() {
        for (int i = 0; i < SLOTS; i++) {
            FileReader reader = idle.getAndSet(i, null);
            if (reader != null) {
                return reader;
            }
        }
        return provider.open(texts);
    }

    /** Takes a reader back for the next borrower. */
    void giveBack(FileReader reader) {
        for (int i = 0; i < SLOTS; i++) {
            if (idle.compareAndSet(i, null, reader)) {
                return;
            }
        }
    }
}
