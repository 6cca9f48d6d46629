package dev.vgpu.hostfiles;

import java.nio.file.FileSystemException;
import java.nio.file.Path;

/**
 * An attribute path that resolves to something other than a regular file (a FIFO, socket, device node or
 * directory), which {@link HostFiles} never reads. It carries no stack trace: it describes the host's file, not a
 * fault of the code that read it, and a scan may keep one per device until it ends.
 */
public final class NotRegularFileException extends FileSystemException {

    private static final long serialVersionUID = 1L;

    /**
     * @param file the path as given
     * @param kind what it is, e.g. {@code a FIFO}
     */
    public NotRegularFileException(Path file, String kind) {
        this(file.toString(), kind);
    }

    /** The same, for a file named by its path text (the native reader makes no {@link Path}). */
    NotRegularFileException(String file, String kind) {
        super(file, null, "is " + kind + ", not a regular file");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
