package dev.vgpu.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The packaged jar started as a separate JVM, its output in a file; end-to-end tests only. */
final class DaemonProcess implements AutoCloseable {

    final Process process;
    final Path log;

    private DaemonProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    static Path jar() {
        String property = System.getProperty("vgpu.daemon.jar");
        Path jar = Path.of(property != null ? property : "target/vgpu-daemon.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("the packaged daemon jar is missing: " + jar + " (run mvn verify)");
        }
        return jar;
    }

    /** Writes a jar holding {@code source}'s class file and a services entry naming it as a DeviceSource. */
    static Path sourceJar(Path jar, Class<?> source) throws IOException {
        String classFile = source.getName().replace('.', '/') + ".class";
        try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(jar))) {
            out.putNextEntry(new java.util.jar.JarEntry(classFile));
            try (var in = source.getClassLoader().getResourceAsStream(classFile)) {
                in.transferTo(out);
            }
            out.putNextEntry(new java.util.jar.JarEntry("META-INF/services/dev.vgpu.core.spi.DeviceSource"));
            out.write((source.getName() + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return jar;
    }

    /** A daemon process started some other way (e.g. through a shell), its output in {@code log}. */
    static DaemonProcess wrap(Process process, Path log) {
        return new DaemonProcess(process, log);
    }

    /** {@code java -cp <classPath> dev.vgpu.daemon.VgpuDaemon <args>}, output to {@code log}. */
    static DaemonProcess start(String classPath, Path log, String... args) throws IOException {
        return start(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), classPath, log, args);
    }

    /** {@code java -cp <classPath> dev.vgpu.daemon.VgpuDaemon <args>} with these environment variables added. */
    static DaemonProcess startWithEnv(java.util.Map<String, String> env, String classPath, Path log, String... args)
            throws IOException {
        return start(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), env, classPath, log, args);
    }

    /** The same with these JVM options on the JVM running the tests. */
    static DaemonProcess start(List<String> jvmOptions, String classPath, Path log, String... args)
            throws IOException {
        return start(jvmOptions, java.util.Map.of(), classPath, log, args);
    }

    /**
     * The packaged jar with the image's JVM flags ({@link #manifestJvmOptions()}) on the JDK the image's runtime is
     * linked from ({@link #runtimeJdk()}): the flags are that JDK's.
     */
    static DaemonProcess startAsManifest(Path log, String... args) throws IOException {
        return startAsManifest(java.util.Map.of(), log, args);
    }

    /** The same with these environment variables added. */
    static DaemonProcess startAsManifest(java.util.Map<String, String> env, Path log, String... args)
            throws IOException {
        return start(runtimeJdk().resolve("bin/java"), manifestJvmOptions(), env, jar().toString(), log, args);
    }

    /**
     * The JDK the Dockerfile links the image's runtime from (Temurin 25; Maven's {@code ffm.jdk.home}, docs/BUILD.md),
     * as failsafe passes it.
     *
     * @throws IllegalStateException naming the property when that JDK is missing
     */
    static Path runtimeJdk() {
        Path jdk = Path.of(System.getProperty("vgpu.runtime.jdk", "/usr/lib/jvm/temurin-25-jdk-amd64"));
        if (!Files.isExecutable(jdk.resolve("bin/jlink"))) {
            throw new IllegalStateException("no JDK 25 at " + jdk + " (no bin/jlink): the image's runtime and the"
                    + " manifest's JVM flags are Java 25's; install Temurin 25 there, or build with"
                    + " -Dffm.jdk.home=DIR (docs/BUILD.md)");
        }
        return jdk;
    }

    private static DaemonProcess start(List<String> jvmOptions, java.util.Map<String, String> env, String classPath,
                                       Path log, String... args) throws IOException {
        return start(Path.of(System.getProperty("java.home"), "bin", "java"), jvmOptions, env, classPath, log, args);
    }

    private static DaemonProcess start(Path java, List<String> jvmOptions, java.util.Map<String, String> env,
                                       String classPath, Path log, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(java.toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, "dev.vgpu.daemon.VgpuDaemon"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        return new DaemonProcess(process, log);
    }

    /**
     * The JVM flags the image links into its Java runtime ({@code deploy/image/jvm.flags}): the heap and stack the
     * daemon really gets, in every install route.
     */
    static List<String> manifestJvmOptions() throws IOException {
        List<String> options = imageJvmFlags(Path.of("../deploy/image/jvm.flags"));
        if (options.stream().noneMatch(o -> o.startsWith("-Xmx"))) {
            throw new IllegalStateException("the image's flags set no -Xmx: " + options);
        }
        return options;
    }

    /** The flags of a flags file as the Dockerfile reads it: one per line, blank lines and {@code #} lines skipped. */
    static List<String> imageJvmFlags(Path file) throws IOException {
        return Files.readAllLines(file).stream().map(String::strip)
                .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
    }

    String output() throws IOException {
        return Files.readString(log);
    }

    int awaitExit(long seconds) throws InterruptedException, IOException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("daemon still running after " + seconds + " s; output:\n" + output());
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
