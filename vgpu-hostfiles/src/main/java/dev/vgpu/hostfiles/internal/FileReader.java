package dev.vgpu.hostfiles.internal;

import java.io.IOException;
import java.util.List;

/**
 * A reader of the default file system that answers by path text, faster than {@code java.io}/NIO where it can
 * ({@link NativeReaderProvider}: system calls through {@code java.lang.foreign}). Every method answers null (or -1)
 * where it cannot answer exactly what the NIO way would (a rare error, a path that is not plain ASCII): the caller,
 * {@link dev.vgpu.hostfiles.HostFiles}, then asks NIO.
 *
 * <p>Threads: one reader is one set of working buffers, used by one thread at a time. Its owner lends it out: the
 * {@code HostFiles} keeps a few idle ones and a scan round holds one for its thread while it runs.
 */
public interface FileReader {

    /** The most bytes a read reads: sysfs attributes are at most a page, anything larger is garbage. */
    int MAX_BYTES = 64 * 1024;
    /** What {@link #type} answers for a path that cannot be asked (missing, denied, a loop). */
    int MISSING = 0;
    /** What {@link #type} answers for a directory: its {@code S_IFDIR} mode bits. */
    int DIRECTORY = 0040000;

    /**
     * The text of the regular file {@code dir/name} ({@code dir} itself when {@code name} is null); null: ask NIO.
     *
     * @throws NotRegular when the path resolves to anything but a regular file, which is not read
     */
    String read(String dir, String name, boolean strip) throws IOException;

    /**
     * The last component of the text of the link {@code dir/entry/name} ({@code dir/name} when {@code entry} is
     * null), not followed; null: ask NIO.
     */
    String linkName(String dir, String entry, String name) throws IOException;

    /** The entry names of the directory {@code dir} ({@code dir/name} when {@code name} is not null); null: ask NIO. */
    List<String> list(String dir, String name) throws IOException;

    /**
     * The file type bits ({@code S_IFMT}) of {@code dir/name} (or {@code dir}), links followed or not;
     * {@link #MISSING} when it cannot be asked; -1: ask NIO.
     */
    int type(String dir, String name, boolean follow);

    /**
     * A scan round starts ({@code true}) or ends ({@code false}) on the thread that holds this reader: while it runs
     * the reader may keep the descriptors of directories it lists and make later calls relative to them
     * (docs/BUILD.md, "Kept directories"); at its end every kept descriptor is closed.
     */
    void round(boolean running);

    /**
     * A path that resolves to something other than a regular file, refused unread; the caller turns it into its
     * public {@code NotRegularFileException}. No stack trace: it describes the host's file.
     */
    final class NotRegular extends IOException {
        private static final long serialVersionUID = 1L;
        private final String file;
        private final String kind;

        /**
         * @param file the path text
         * @param kind what it is, e.g. {@code a FIFO}
         */
        public NotRegular(String file, String kind) {
            super(file + " is " + kind + ", not a regular file");
            this.file = file;
            this.kind = kind;
        }

        /** The path text. */
        public String file() {
            return file;
        }

        /** What it is, e.g. {@code a FIFO}. */
        public String kind() {
            return kind;
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
