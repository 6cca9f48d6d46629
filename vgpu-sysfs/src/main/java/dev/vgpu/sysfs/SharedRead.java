package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.NotRegularFileException;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;

/**
 * The outcome of one read that several sources make in a scan, kept in the {@link Host#scanScope() scan scope}
 * so that the file is read once and every source sees the same answer: the value, or the failure.
 *
 * <p>The failure is the {@link IOException} the first reader got, kept as a copy of the same kind (same
 * {@code NoSuchFileException}/{@code NotLinkException}/... type, file and reason) without a stack trace, and thrown
 * to every reader so that they take exactly the branch they would have taken reading the file themselves; nobody
 * may modify it (no {@code addSuppressed}, no {@code initCause}). Without a stack trace because a scan may keep
 * one failure per bus entry until it ends: 100,000 dangling entries with their stack traces held hundreds of
 * megabytes and ran the manifest's heap out.
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

    /**
     * A scan-scope key that is its own read and, once read, holds the outcome: the scope keeps the first such key as
     * the value of every equal key, so a read shared this way makes no object beyond the key (a driver or vendor asked
     * by the path of a function the scan has not listed, e.g. by a re-check). Subclasses define {@code equals} and
     * {@code hashCode} on what names the read.
     *
     * <p>Threads: the outcome is one {@code volatile} field, written whole by each read ({@link Outcome}). Core's
     * scope reads a key once and publishes it after; a scope of an embedder that reads the same key object on two
     * threads at once still leaves one read's whole outcome, never half of each.
     */
    abstract static class Memo<T> {
        /** Null before the first read. */
        private volatile Object outcome;

        /** The read; called once per key object in a scope that keeps it, on every ask under {@code none()}. */
        abstract T read() throws IOException;

        private Memo<T> fill() {
            Object next;
            try {
                next = Outcome.of(read());
            } catch (IOException e) {
                next = Outcome.failed(e);
            }
            outcome = next;
            return this;
        }

        private T answer() throws IOException {
            return Outcome.answer(outcome);
        }
    }

    /**
     * A read's whole outcome as one object, for a holder that keeps it in one field: the value, {@link #NULL} for a
     * read that answered null (an unbound function's driver), or the failure as a {@link Quiet} copy.
     */
    static final class Outcome {
        /** The outcome of a read that answered null. */
        private static final Object NULL = new Object();

        private Outcome() {
        }

        /** The outcome of a read that answered {@code value} (null included). */
        static Object of(Object value) {
            return value == null ? NULL : value;
        }

        /** The outcome of a read that failed: a copy of the failure without a stack trace. */
        static Object failed(IOException failure) {
            return Quiet.copy(failure);
        }

        /** The value an outcome holds, or its failure thrown. */
        @SuppressWarnings("unchecked") // a holder keeps the outcomes of one read, whose values are T
        static <T> T answer(Object outcome) throws IOException {
            if (outcome instanceof IOException e) {
                throw e;
            }
            return outcome == NULL ? null : (T) outcome;
        }
    }

    /** Fills a {@link Memo}; one function for every key, so that asking allocates nothing beyond the key. */
    private static final java.util.function.Function<Memo<?>, Memo<?>> FILL = Memo::fill;

    /**
     * {@link #once(Host, Object, Reader)} for a key that reads itself and keeps the outcome: the same sharing, with
     * no reader and no outcome object made.
     */
    @SuppressWarnings("unchecked") // a Memo<T> maps to a Memo<T>: the scope keeps the key FILL filled
    static <T> T once(Host host, Memo<T> key) throws IOException {
        return ((Memo<T>) host.scanScope().computeIfAbsent(key, FILL)).answer();
    }

    /**
     * Answers a read once per key and scan: the first call reads, later calls (from any source of the scan) get
     * the same value or the same failure. Under {@link ScanScope#none()} every call reads.
     *
     * @param key a value naming the read (equal keys share one read), private to this module, e.g. a
     *            {@code PciBus.BusListing}; never a {@link Memo}, which {@link #once(Host, Memo)} answers
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
            return new SharedRead<>(null, Quiet.copy(e));
        }
    }

    /** Failures kept in a scan scope: the same kinds as the JDK's, without a stack trace. */
    interface Quiet {

        /**
         * A copy of {@code e} of the same kind, or a plain {@link IOException} with its message; {@code e} itself
         * when it has no stack trace to drop (ours, and {@link NotRegularFileException}, whose
         * callers catch it by its type).
         */
        static IOException copy(IOException e) {
            if (e instanceof Quiet || e instanceof NotRegularFileException) {
                return e;
            }
            if (e instanceof java.nio.file.FileSystemException f) {
                if (e instanceof java.nio.file.NoSuchFileException) {
                    return new NoSuchFile(f.getFile(), f.getOtherFile(), f.getReason());
                }
                if (e instanceof java.nio.file.NotLinkException) {
                    return new NotLink(f.getFile(), f.getOtherFile(), f.getReason());
                }
                if (e instanceof java.nio.file.AccessDeniedException) {
                    return new AccessDenied(f.getFile(), f.getOtherFile(), f.getReason());
                }
                return new FileSystem(f.getFile(), f.getOtherFile(), f.getReason());
            }
            return new Plain(e.getClass() == IOException.class ? null : e.getClass().getSimpleName(), e.getMessage());
        }
    }

    /** A {@link java.nio.file.NoSuchFileException} without a stack trace. */
    static final class NoSuchFile extends java.nio.file.NoSuchFileException implements Quiet {
        private static final long serialVersionUID = 1L;

        NoSuchFile(String file, String other, String reason) {
            super(file, other, reason);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** A {@link java.nio.file.NotLinkException} without a stack trace. */
    static final class NotLink extends java.nio.file.NotLinkException implements Quiet {
        private static final long serialVersionUID = 1L;

        NotLink(String file, String other, String reason) {
            super(file, other, reason);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** A {@link java.nio.file.AccessDeniedException} without a stack trace. */
    static final class AccessDenied extends java.nio.file.AccessDeniedException implements Quiet {
        private static final long serialVersionUID = 1L;

        AccessDenied(String file, String other, String reason) {
            super(file, other, reason);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** A {@link java.nio.file.FileSystemException} without a stack trace. */
    static final class FileSystem extends java.nio.file.FileSystemException implements Quiet {
        private static final long serialVersionUID = 1L;

        FileSystem(String file, String other, String reason) {
            super(file, other, reason);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** A plain {@link IOException} without a stack trace, remembering the kind it copies for messages. */
    static final class Plain extends IOException implements Quiet {
        private static final long serialVersionUID = 1L;
        private final String kind;

        Plain(String kind, String message) {
            super(message);
            this.kind = kind;
        }

        /** The simple class name of the copied exception; null when it was a plain {@link IOException}. */
        String kind() {
            return kind;
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
