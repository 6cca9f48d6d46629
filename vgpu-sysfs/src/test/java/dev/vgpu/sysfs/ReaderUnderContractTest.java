package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.hostfiles.HostFiles;
import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Which of vgpu-hostfiles' readers the hostile-input and source contracts of this module ran against: the native one when
 * the runtime is Java 22 or later and vgpu-hostfiles comes from its multi-release jar (as in {@code mvn verify}, and in
 * {@code .ci/run}'s second run on Java 25), java.io/NIO otherwise. Fails if the jar's native reader is not the one
 * in use there, so the second run cannot pass on NIO unnoticed.
 */
class ReaderUnderContractTest {

    @Test
    void theNativeReaderRunsWhereTheReaderComesFromItsJarOnJava22AndLater() throws URISyntaxException {
        Path core = Path.of(HostFiles.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        boolean nativeExpected = core.getFileName().toString().endsWith(".jar") && Runtime.version().feature() >= 22;

        assertThat(HostFiles.load().describe()).as("reader of %s on Java %s", core, Runtime.version())
                .startsWith(nativeExpected ? "native" : "java.io/NIO");
    }
}
