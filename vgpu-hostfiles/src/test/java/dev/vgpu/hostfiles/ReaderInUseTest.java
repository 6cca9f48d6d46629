package dev.vgpu.hostfiles;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Which reader {@link HostFilesTest} and the sysfs contracts ran against: the native one exactly when the
 * runtime is Java 22 or later and the classes come from the multi-release jar (a class directory has no versioned
 * classes), since the build grants native access on Java 22 and later. Without this a broken overlay would pass
 * every contract unnoticed, on the NIO reader.
 */
class ReaderInUseTest {

    @Test
    void theNativeReaderRunsExactlyFromTheJarOnJava22AndLater() throws URISyntaxException {
        Path codeSource = Path.of(HostFiles.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        boolean fromJar = codeSource.getFileName().toString().endsWith(".jar");
        boolean nativeExpected = fromJar && Runtime.version().feature() >= 22;

        assertThat(HostFiles.load().describe()).as("reader of %s on Java %s", codeSource, Runtime.version())
                .startsWith(nativeExpected ? "native" : "java.io/NIO");
    }
}
