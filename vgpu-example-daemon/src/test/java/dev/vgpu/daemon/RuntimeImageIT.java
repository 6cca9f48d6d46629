package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image's Java runtime as the Dockerfile makes it, without Docker (no image can be built here): {@code jlink} of
 * the JDK 25 with the Dockerfile's modules and options, its AOT cache trained by the Dockerfile's own command
 * ({@code scripts/train-aot.sh}, which reads the flags from {@code deploy/base/daemonset.yaml}), then the packaged
 * jar launched on that runtime with each manifest's exact {@code JAVA_TOOL_OPTIONS} (only the cache's image path
 * is swapped for the trained file): the cache must load, archived heap objects included (a heap too small for them
 * makes the JVM refuse to start), and nothing may print a warning.
 *
 * <p>Threads: the test thread only; each JVM is a child process it waits for.
 */
class RuntimeImageIT {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    /** The cache's path in the image, as the manifests name it and the Dockerfile trains it. */
    private static final String IMAGE_CACHE = "/opt/vgpu/vgpu-daemon.aot";

    @TempDir
    static Path work;
    private static Path linkedJava;
    private static Path cache;

    @BeforeAll
    static void linkTheRuntimeAndTrainTheCacheAsTheDockerfileDoes() throws Exception {
        String dockerfile = Files.readString(REPO.resolve("Dockerfile")).replace("\\\n", " ");
        Matcher modules = Pattern.compile("(?m)^ARG JLINK_MODULES=(\\S+)$").matcher(dockerfile);
        assertThat(modules.find()).as("ARG JLINK_MODULES in the Dockerfile").isTrue();
        Matcher jlink = Pattern.compile("\\bjlink (.+?) --output /opt/java\\b").matcher(dockerfile);
        assertThat(jlink.find()).as("the Dockerfile's jlink command").isTrue();
        Path runtime = work.resolve("java");
        List<String> link = new ArrayList<>(List.of(DaemonProcess.runtimeJdk().resolve("bin/jlink").toString()));
        for (String option : jlink.group(1).strip().split("\\s+")) {
            link.add(option.equals("\"$JLINK_MODULES\"") ? modules.group(1) : option);
        }
        link.addAll(List.of("--output", runtime.toString()));
        run(link, Map.of(), "jlink");
        linkedJava = runtime.resolve("bin/java");

        Matcher train = Pattern.compile("RUN /tmp/train-aot\\.sh (\\S+) (\\S+) (\\S+) /tmp/daemonset\\.yaml")
                .matcher(dockerfile);
        assertThat(train.find()).as("the Dockerfile's training step").isTrue();
        assertThat(dockerfile).contains("COPY scripts/train-aot.sh /tmp/train-aot.sh",
                "COPY deploy/base/daemonset.yaml /tmp/daemonset.yaml");
        assertThat(List.of(train.group(1), train.group(2), train.group(3)))
                .as("the training step's runtime, jar and cache")
                .containsExactly("/opt/java/bin/java", "/opt/vgpu/vgpu-daemon.jar", IMAGE_CACHE);
        assertThat(DaemonProcess.javaToolOptions(REPO.resolve("deploy/base/daemonset.yaml")))
                .as("the cache the manifest names is the one the image trains").contains("-XX:AOTCache=" + IMAGE_CACHE);
        cache = work.resolve("vgpu-daemon.aot");
        run(List.of("sh", REPO.resolve("scripts/train-aot.sh").toString(), linkedJava.toString(),
                DaemonProcess.jar().toString(), cache.toString(), REPO.resolve("deploy/base/daemonset.yaml").toString()),
                Map.of(), "scripts/train-aot.sh");
        assertThat(cache).isNotEmptyFile();
    }

    @Test
    void theDefaultManifestsFlagsLoadTheCacheWithoutAWarning() throws Exception {
        launchesWithTheCache(REPO.resolve("deploy/base/daemonset.yaml"), "default");
    }

    /** The NVML variant's heap differs from the one the cache was trained with; its archived objects still load. */
    @Test
    void theNvmlManifestsFlagsLoadTheCacheWithoutAWarning() throws Exception {
        launchesWithTheCache(REPO.resolve("deploy/overlays/nvml/nvml.yaml"), "nvml");
    }

    /** A cache that cannot be opened (missing, or from another build) only costs start-up time. */
    @Test
    void aMissingCacheIsNotFatal() throws Exception {
        Path log = work.resolve("missing-aot.log");
        String flags = flags(REPO.resolve("deploy/base/daemonset.yaml"), work.resolve("no-such.aot"));
        Result result = run(List.of(linkedJava.toString(), "-Xlog:aot=info:file=" + log, "-jar",
                DaemonProcess.jar().toString(), "--version"), Map.of("JAVA_TOOL_OPTIONS", flags), "--version");
        assertThat(result.out()).contains("vgpu-daemon ", "Java runtime: 25");
        assertThat(Files.readString(log)).doesNotContain("Opened AOT cache");
    }

    private static void launchesWithTheCache(Path manifest, String name) throws Exception {
        Path log = work.resolve(name + "-aot.log");
        Result result = run(List.of(linkedJava.toString(), "-Xlog:aot=info:file=" + log, "-jar",
                DaemonProcess.jar().toString(), "demo"), Map.of("JAVA_TOOL_OPTIONS", flags(manifest, cache),
                "MALLOC_ARENA_MAX", "2"), "demo with " + manifest);
        String aot = Files.readString(log);
        assertThat(aot).as("-Xlog:aot of the launch with %s", manifest)
                .contains("Opened AOT cache " + cache)
                .contains("Using AOT-linked classes: true")
                .containsPattern("Loaded heap +region|Heap data mapped at")
                .doesNotContain("[warning]", "[error]");
        assertThat(result.out()).contains("demo finished");
        assertThat(result.err().lines().filter(line -> line.toLowerCase(Locale.ROOT).contains("warning")
                || line.contains("[error]")).toList()).as("warnings on stderr; all of it:%n%s", result.err()).isEmpty();
    }

    /** The manifest's exact JAVA_TOOL_OPTIONS value, with the cache's image path replaced by {@code local}. */
    private static String flags(Path manifest, Path local) throws IOException {
        List<String> flags = DaemonProcess.javaToolOptions(manifest);
        assertThat(flags).as("%s names the image's cache", manifest).contains("-XX:AOTCache=" + IMAGE_CACHE);
        return String.join(" ", flags).replace("-XX:AOTCache=" + IMAGE_CACHE, "-XX:AOTCache=" + local);
    }

    private record Result(String out, String err) {
    }

    /** Runs a command that must exit 0 within two minutes; its stdout and stderr. */
    private static Result run(List<String> command, Map<String, String> env, String what) throws Exception {
        Path out = Files.createTempFile(work, "out-", ".txt");
        Path err = Files.createTempFile(work, "err-", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().putAll(env);
        Process process = builder.start();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError(what + " still running after 120 s: " + command);
        }
        Result result = new Result(Files.readString(out), Files.readString(err));
        assertThat(process.exitValue()).as("%s exited; stderr:%n%s", what, result.err()).isZero();
        return result;
    }
}
