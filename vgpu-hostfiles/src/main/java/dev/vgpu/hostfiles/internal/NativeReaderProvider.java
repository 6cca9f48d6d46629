package dev.vgpu.hostfiles.internal;

/**
 * The system-call reader of Java 22 and later ({@code java.lang.foreign}, docs/BUILD.md "The multi-release jar").
 * This class is the release-17 one: never available. The multi-release jar replaces it on Java 22 and later with the
 * class of the same name in {@code src/main/java22}, with the same public members.
 */
public final class NativeReaderProvider implements FileReaderProvider {

    /** Found by {@link java.util.ServiceLoader}. */
    public NativeReaderProvider() {
    }

    @Override
    public boolean isAvailable() {
        return false;
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public String describe() {
        return "no native reader before Java 22";
    }

    @Override
    public FileReader open(KnownTexts texts) {
        throw new UnsupportedOperationException(describe());
    }
}
