package dev.vgpu.hostfiles.internal;

/**
 * Makes {@link FileReader}s, chosen as grpc-java chooses its transport providers: every provider on the class path or
 * module path ({@code META-INF/services} and {@code provides} in {@code module-info}) says whether it can run here
 * ({@link #isAvailable()}) and how much it should be preferred ({@link #priority()}, 0 to 10, 5 the usual); the
 * available one with the highest priority reads, and with none, {@code java.io}/NIO alone does.
 */
public interface FileReaderProvider {

    /** Whether this provider's readers work in this process (platform, runtime, native access). */
    boolean isAvailable();

    /** 0 to 10; the highest available wins. */
    int priority();

    /** What reads, in words, for a start line; when not available, why not. */
    String describe();

    /**
     * A new reader, with its own buffers; only called when {@link #isAvailable()}.
     *
     * @param texts the table of known short texts the reader hands out again (its owner's)
     */
    FileReader open(KnownTexts texts);
}
