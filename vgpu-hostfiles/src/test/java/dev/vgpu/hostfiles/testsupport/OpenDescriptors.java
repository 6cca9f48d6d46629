package dev.vgpu.hostfiles.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The process's open descriptors of files under one directory: what each {@code /proc/self/fd} entry names, so that a
 * descriptor other code of the JVM opens or closes meanwhile does not count (the tests of kept directories ask this).
 */
public final class OpenDescriptors {

    private OpenDescriptors() {
    }

    /** How many open descriptors name {@code dir} or a file below it. */
    public static long under(Path dir) throws IOException {
        String under = dir.toRealPath() + "/";
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return (Files.readSymbolicLink(fd) + "/").startsWith(under);
                } catch (IOException e) {
                    return false; // closed since the listing
                }
            }).count();
        }
    }
}
