package dev.vgpu.core.spi;

import java.io.IOException;
import java.util.List;

/**
 * The native way {@link AttributeFiles} reads files of the default file system, where the runtime offers one. This
 * class is the release-17 one and offers none ({@link #load()} answers null), so every read goes through
 * {@code java.io} and NIO. The multi-release jar replaces it on Java 22 and later with the class of the same name in
 * {@code src/main/java22}, which calls {@code open(2)}, {@code fstat(2)}, {@code read(2)}, {@code readlink(2)} and
 * {@code getdents64(2)} through {@code java.lang.foreign} (docs/BUILD.md, "The multi-release core jar").
 *
 * <p>Both classes have the same members. Every method answers null where the native way cannot answer exactly what
 * the NIO way would (a rare error, a path that is not ASCII): the caller then reads through NIO.
 */
final class NativeFiles {

    /** What {@link #type} answers for a path that cannot be asked (missing, denied, a loop). */
    static final int MISSING = 0;
    /** What {@link #type} answers for a directory: its {@code S_IFDIR} mode bits. */
    static final int DIRECTORY = 0040000;

    private NativeFiles() {
    }

    /** The native reader of this runtime; null: this release has none. */
    static NativeFiles load() {
        return null;
    }

    /** Nothing to keep on this release. */
    void scanStarted() {
    }

    /** Nothing to release on this release. */
    void scanEnded() {
    }

    /** What reads the default file system, in words, for the start line: here always {@code java.io/NIO}. */
    static String describe(NativeFiles reader) {
        return "java.io/NIO";
    }

    /**
     * The text of the regular file {@code dir/name} (or {@code dir} itself when {@code name} is null), as
     * {@link AttributeFiles#read(java.nio.file.Path)} answers it; null when the NIO way must answer.
     */
    String read(String dir, String name, boolean strip) throws IOException {
        throw new UnsupportedOperationException("no native reader on this runtime");
    }

    /** The last component of the text of the link {@code dir/name}, as {@link AttributeFiles#linkName} answers it. */
    String linkName(String dir, String name) throws IOException {
        throw new UnsupportedOperationException("no native reader on this runtime");
    }

    /** {@link #linkName(String, String)} of {@code dir/entry/name}, the path never joined as a string. */
    String linkName(String dir, String entry, String name) throws IOException {
        throw new UnsupportedOperationException("no native reader on this runtime");
    }

    /** The entry names of the directory {@code dir} (or {@code dir/name}), as {@link AttributeFiles#list} lists. */
    List<String> list(String dir, String name) throws IOException {
        throw new UnsupportedOperationException("no native reader on this runtime");
    }

    /**
     * The file type bits ({@code S_IFMT}) of {@code dir/name} (or {@code dir}), links followed or not; {@link #MISSING}
     * when it cannot be asked; -1 when the NIO way must answer.
     */
    int type(String dir, String name, boolean follow) {
        throw new UnsupportedOperationException("no native reader on this runtime");
    }
}
