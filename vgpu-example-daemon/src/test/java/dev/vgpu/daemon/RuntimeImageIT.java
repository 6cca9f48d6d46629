package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
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
 * The image's Java runtime as the Dockerfile makes it, without a container engine (scripts/test-image.sh runs the
 * real image where podman is installed): {@code jlink} of the JDK 25 with the Dockerfile's modules and options and the
 * flags of {@code deploy/image/jvm.flags} linked in, its AOT cache trained by the Dockerfile's own training command,
 * then the packaged jar launched on that runtime as the image's launcher launches it (only the cache's image path is
 * swapped for the trained file): the cache must load, archived heap objects included (a heap too small for them makes
 * the JVM refuse to start), and nothing may print a warning. The NVML variant's JAVA_TOOL_OPTIONS (a larger heap) is
 * applied over the linked flags, as in its pod.
 *
 * <p>Threads: the test thread only; each JVM is a child process it waits for.
 */
class RuntimeImageIT {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    /** The cache's path in the image, as the launcher names it and the Dockerfile trains it. */
    private static final String IMAGE_CACHE = "/opt/vgpu/vgpu-daemon.aot";
    private static final String IMAGE_JAR = "/opt/vgpu/vgpu-daemon.jar";

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
        assertThat(dockerfile).contains("COPY deploy/image/jvm.flags /build/jvm.flags");
        String flags = String.join(" ", DaemonProcess.imageJvmFlags(REPO.resolve("deploy/image/jvm.flags")));
        Path runtime = work.resolve("java");
        List<String> link = new ArrayList<>(List.of(DaemonProcess.runtimeJdk().resolve("bin/jlink").toString()));
        for (String option : jlink.group(1).strip().split("\\s+")) {
            link.add(switch (option) {
                case "\"$JLINK_MODULES\"" -> modules.group(1);
                case "--add-options=\"${flags#", "}\"" -> option.startsWith("--") ? "--add-options=" + flags : null;
                default -> option;
            });
        }
        link.removeIf(java.util.Objects::isNull);
        assertThat(link).as("the jlink command links the image's flags").contains("--add-options=" + flags);
        link.addAll(List.of("--output", runtime.toString()));
        run(link, Map.of(), "jlink");
        linkedJava = runtime.resolve("bin/java");

        // The Dockerfile's training step, an exec-form RUN: the same command on the linked runtime, with the jar and
        // the cache at local paths.
        Matcher train = Pattern.compile("(?m)^RUN --mount=type=tmpfs,target=/tmp +(\\[.+\\])$").matcher(dockerfile);
        assertThat(train.find()).as("the Dockerfile's training step").isTrue();
        List<String> training = List.of(new ObjectMapper().readValue(train.group(1), String[].class));
        assertThat(training).containsExactly("/opt/java/bin/java", "-XX:AOTCacheOutput=" + IMAGE_CACHE, "-jar",
                IMAGE_JAR, "demo");
        cache = work.resolve("vgpu-daemon.aot");
        run(List.of(linkedJava.toString(), "-XX:AOTCacheOutput=" + cache, "-jar", DaemonProcess.jar().toString(),
                "demo"), Map.of(), "the training run");
        assertThat(cache).isNotEmptyFile();
        assertThat(launcher()).as("the launcher runs the trained cache and jar")
                .containsExactly("/opt/java/bin/java", "-XX:AOTCache=" + IMAGE_CACHE, "-jar", IMAGE_JAR);
    }

    /** The java command of the image's launcher, deploy/image/vgpu-daemon, without its arguments. */
    private static List<String> launcher() throws java.io.IOException {
        String script = Files.readString(REPO.resolve("deploy/image/vgpu-daemon"));
        Matcher exec = Pattern.compile("(?m)^exec (.+) \"\\$@\"$").matcher(script);
        assertThat(exec.find()).as("the launcher's exec line").isTrue();
        return List.of(exec.group(1).split(" "));
    }

    @Test
    void theImagesFlagsLoadTheCacheWithoutAWarning() throws Exception {
        launchesWithTheCache(Map.of(), "default");
    }

    /** The NVML variant's heap differs from the one the cache was trained with; its archived objects still load. */
    @Test
    void theNvmlVariantsLargerHeapLoadsTheCacheWithoutAWarning() throws Exception {
        com.fasterxml.jackson.databind.JsonNode patch = new ObjectMapper(
                new com.fasterxml.jackson.dataformat.yaml.YAMLFactory()).readTree(
                REPO.resolve("deploy/overlays/nvml/nvml.yaml").toFile());
        String options = DeployManifestsTest.env(DeployManifestsTest.container(patch)).get("JAVA_TOOL_OPTIONS");
        assertThat(options).as("the NVML variant's JAVA_TOOL_OPTIONS").startsWith("-Xmx");
        launchesWithTheCache(Map.of("JAVA_TOOL_OPTIONS", options), "nvml");
    }

    /** A cache that cannot be opened (missing, or from another build) only costs start-up time. */
    @Test
    void aMissingCacheIsNotFatal() throws Exception {
        Path log = work.resolve("missing-aot.log");
        Result result = run(List.of(linkedJava.toString(), "-Xlog:aot=info:file=" + log,
                "-XX:AOTCache=" + work.resolve("no-such.aot"), "-jar", DaemonProcess.jar().toString(), "--version"),
                Map.of(), "--version");
        assertThat(result.out()).contains("vgpu-daemon ", "Java runtime: 25");
        assertThat(Files.readString(log)).doesNotContain("Opened AOT cache");
    }

    private static void launchesWithTheCache(Map<String, String> env, String name) throws Exception {
        Path log = work.resolve(name + "-aot.log");
        List<String> command = new ArrayList<>();
        for (String word : launcher()) {
            command.add(word.replace("/opt/java/bin/java", linkedJava.toString()).replace(IMAGE_CACHE,
                    cache.toString()).replace(IMAGE_JAR, DaemonProcess.jar().toString()));
        }
        command.add(1, "-Xlog:aot=info:file=" + log);
        command.add("demo");
        Result result = run(command, env, "demo as the image launches it (" + name + ")");
        String aot = Files.readString(log);
        assertThat(aot).as("-Xlog:aot of the launch (%s)", name)
                .contains("Opened AOT cache " + cache)
                .contains("Using AOT-linked classes: true")
                .containsPattern("Loaded heap +region|Heap data mapped at")
                .doesNotContain("[warning]", "[error]");
        assertThat(result.out()).contains("demo finished");
        assertThat(result.err().lines().filter(line -> line.toLowerCase(Locale.ROOT).contains("warning")
                || line.contains("[error]")).toList()).as("warnings on stderr; all of it:%n%s", result.err()).isEmpty();
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
