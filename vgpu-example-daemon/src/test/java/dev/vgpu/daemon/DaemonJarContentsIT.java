package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged daemon jar carries what runs on Linux x86_64 and aarch64 and nothing for other platforms, no TLS
 * natives, and keeps every bundled library's license files (see docs/BUILD.md).
 */
class DaemonJarContentsIT {

    /**
     * A guard against unnoticed growth; the jar was 25.6 MB before natives for other platforms were dropped, 11.81 MB
     * before {@code serve --mode dra}, and 22,626,870 bytes with fabric8 for it (docs/BUILD.md): that plus 2 %.
     */
    private static final long MAX_BYTES = 23_100_000;

    private static Path jar;
    private static List<String> entries;

    @BeforeAll
    static void open() throws IOException {
        jar = Path.of(System.getProperty("vgpu.daemon.jar"));
        try (JarFile file = new JarFile(jar.toFile())) {
            entries = file.stream().map(ZipEntry::getName).toList();
        }
    }

    @Test
    void holdsNoTestFrameworkClasses() {
        assertThat(entries).as("JUnit, opentest4j and AssertJ are test scope; the daemon uses SysfsTree and StandInKubelet, which hold none")
                .noneMatch(e -> e.startsWith("org/junit/") || e.startsWith("org/opentest4j/")
                        || e.startsWith("org/assertj/") || e.startsWith("META-INF/third-party/junit"));
    }

    @Test
    void staysUnderItsSizeBudget() throws IOException {
        assertThat(Files.size(jar)).isLessThanOrEqualTo(MAX_BYTES);
    }

    @Test
    void carriesEpollAndJnaNativesForLinuxX8664AndAarch64Only() {
        List<String> natives = entries.stream()
                .filter(e -> e.endsWith(".so") || e.endsWith(".dll") || e.endsWith(".jnilib") || e.endsWith(".a"))
                .sorted().toList();
        assertThat(natives).containsExactly(
                "META-INF/native/libio_grpc_netty_shaded_netty_transport_native_epoll_aarch_64.so",
                "META-INF/native/libio_grpc_netty_shaded_netty_transport_native_epoll_x86_64.so",
                "com/sun/jna/linux-aarch64/libjnidispatch.so",
                "com/sun/jna/linux-x86-64/libjnidispatch.so");
    }

    @Test
    void leavesOutUnusedProtosButKeepsTheKubeletApi() {
        assertThat(entries).noneMatch(e -> e.startsWith("com/google/rpc/") || e.startsWith("com/google/type/"));
        assertThat(entries).contains("dev/vgpu/kubelet/api/v1beta1/AllocateRequest.class",
                "com/google/protobuf/GeneratedMessageV3.class");
    }

    @Test
    void keepsOurLicenseOnTopAndEachLibrarysLicenseFiles() throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            assertThat(read(file, "META-INF/LICENSE")).contains("Apache License", "Version 2.0");
            assertThat(read(file, "META-INF/NOTICE")).startsWith("vgpu\n").contains("fabric8 Kubernetes client");
        }
        assertThat(entries).contains(
                "META-INF/third-party/grpc-netty-shaded-jar/META-INF/LICENSE.txt",
                "META-INF/third-party/grpc-netty-shaded-jar/META-INF/NOTICE.txt",
                "META-INF/third-party/jna-jpms-jar/META-INF/LICENSE",
                "META-INF/third-party/slf4j-api-jar/META-INF/LICENSE.txt");
        // Jackson 3, bundled for --mode dra, ships its files; fabric8's jars carry none (docs/BUILD.md).
        assertThat(entries).anyMatch(e -> e.startsWith("META-INF/third-party/jackson-databind-jar/"));
    }

    private static String read(JarFile file, String name) throws IOException {
        ZipEntry entry = file.getEntry(name);
        assertThat(entry).as(name).isNotNull();
        try (InputStream in = file.getInputStream(entry)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
