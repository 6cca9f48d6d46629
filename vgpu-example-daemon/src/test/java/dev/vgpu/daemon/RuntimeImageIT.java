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
 * The image's Java runtime as the Dockerfile makes it, without a container engine ({@link ImageIT} runs the real
 * image where podman is installed): {@code jlink} of the JDK 25 with the Dockerfile's modules and options and the
 * flags of {@code deploy/image/jvm.flags} linked in, its class-data archive dumped by the Dockerfile's own command from
 * {@code deploy/image/vgpu-daemon.classlist}, then the packaged jar launched on that runtime as the image's launcher
 * launches it (only the archive's image path is swapped for the dumped file): the archive must map, its heap objects
 * included, most classes must come from it, and nothing may print a warning. The NVML variant's JAVA_TOOL_OPTIONS (a
 * larger heap) is applied over the linked flags, as in its pod. A second dump of the same list must give the same
 * bytes: that is what makes two image builds give one digest.
 *
 * <p>Threads: the test thread only; each JVM is a child process it waits for.
 */
class RuntimeImageIT {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    /** The archive's path in the image, as the launcher names it and the Dockerfile dumps it. */
    private static final String IMAGE_ARCHIVE = "/opt/vgpu/vgpu-daemon.jsa";
    private static final String IMAGE_JAR = "/opt/vgpu/vgpu-daemon.jar";
    private static final Path CLASS_LIST = REPO.resolve("deploy/image/vgpu-daemon.classlist");
    /**
     * The least share of the classes a launch loads that must come from the archive. Measured with the committed list:
     * 98% for {@code demo}, 96% for {@code serve}; the rest are hidden classes (lambda forms), which a static archive
     * does not hold, and classes only other paths load. Below this the list is out of date.
     */
    static final double MIN_ARCHIVED_SHARE = 0.90;

    @TempDir
    static Path work;
    private static Path linkedJava;
    private static List<String> dump;
    private static Path archive;

    @BeforeAll
    static void linkTheRuntimeAndDumpTheArchiveAsTheDockerfileDoes() throws Exception {
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

        // The Dockerfile's dump step, the class list copied in and an exec-form RUN: the same command on the linked
        // runtime, with the list, the jar and the archive at local paths.
        Matcher copy = Pattern.compile("(?m)^COPY deploy/image/vgpu-daemon.classlist (\\S+)$").matcher(dockerfile);
        assertThat(copy.find()).as("the Dockerfile copies the class list").isTrue();
        Matcher step = Pattern.compile("(?m)^RUN +(\\[.+-Xshare:dump.+\\])$").matcher(dockerfile);
        assertThat(step.find()).as("the Dockerfile's dump step").isTrue();
        List<String> command = List.of(new ObjectMapper().readValue(step.group(1), String[].class));
        assertThat(command).containsExactly("/opt/java/bin/java", "-Xshare:dump",
                "-XX:SharedClassListFile=" + copy.group(1), "-XX:SharedArchiveFile=" + IMAGE_ARCHIVE, "-cp", IMAGE_JAR);
        dump = command.stream().map(word -> word.replace("/opt/java/bin/java", linkedJava.toString())
                .replace(copy.group(1), CLASS_LIST.toString()).replace(IMAGE_JAR, DaemonProcess.jar().toString()))
                .toList();
        archive = dumpTo(work.resolve("vgpu-daemon.jsa"));
        assertThat(launcher()).as("the launcher runs the dumped archive and the jar")
                .containsExactly("/opt/java/bin/java", "-XX:SharedArchiveFile=" + IMAGE_ARCHIVE, "-jar", IMAGE_JAR);
    }

    /** The Dockerfile's dump, writing the archive to {@code file}. */
    private static Path dumpTo(Path file) throws Exception {
        run(dump.stream().map(word -> word.replace(IMAGE_ARCHIVE, file.toString())).toList(), Map.of(),
                "the archive's dump");
        assertThat(file).isNotEmptyFile();
        return file;
    }

    /** The java command of the image's launcher, deploy/image/vgpu-daemon, without its arguments. */
    private static List<String> launcher() throws java.io.IOException {
        String script = Files.readString(REPO.resolve("deploy/image/vgpu-daemon"));
        Matcher exec = Pattern.compile("(?m)^exec (.+) \"\\$@\"$").matcher(script);
        assertThat(exec.find()).as("the launcher's exec line").isTrue();
        return List.of(exec.group(1).split(" "));
    }

    @Test
    void theImagesFlagsLoadTheArchiveWithoutAWarning() throws Exception {
        launchesWithTheArchive(Map.of(), "default");
    }

    /** The NVML variant's heap differs from the one the archive was dumped with; its heap objects still load. */
    @Test
    void theNvmlVariantsLargerHeapLoadsTheArchiveWithoutAWarning() throws Exception {
        com.fasterxml.jackson.databind.JsonNode patch = new ObjectMapper(
                new com.fasterxml.jackson.dataformat.yaml.YAMLFactory()).readTree(
                REPO.resolve("deploy/overlays/nvml/nvml.yaml").toFile());
        String options = DeployManifestsTest.env(DeployManifestsTest.container(patch)).get("JAVA_TOOL_OPTIONS");
        assertThat(options).as("the NVML variant's JAVA_TOOL_OPTIONS").startsWith("-Xmx");
        launchesWithTheArchive(Map.of("JAVA_TOOL_OPTIONS", options), "nvml");
    }

    /** The image's digest rests on this: the same list, runtime and jar dumped twice give the same bytes. */
    @Test
    void aSecondDumpOfTheSameListWritesTheSameBytes() throws Exception {
        Path again = dumpTo(work.resolve("again.jsa"));
        assertThat(Files.mismatch(archive, again)).as("first differing byte of two dumps (-1: none)").isEqualTo(-1L);
    }

    /** An archive that cannot be opened (missing, or from another build) only costs start-up time. */
    @Test
    void aMissingArchiveIsNotFatal() throws Exception {
        Path log = work.resolve("missing-cds.log");
        Result result = run(List.of(linkedJava.toString(), "-Xlog:cds=info:file=" + log,
                "-XX:SharedArchiveFile=" + work.resolve("no-such.jsa"), "-jar", DaemonProcess.jar().toString(),
                "--version"), Map.of(), "--version");
        assertThat(result.out()).contains("vgpu-daemon ", "Java runtime: 25");
        assertThat(Files.readString(log)).doesNotContain("Opened shared archive file");
    }

    private static void launchesWithTheArchive(Map<String, String> env, String name) throws Exception {
        Path log = work.resolve(name + "-cds.log");
        List<String> command = new ArrayList<>();
        for (String word : launcher()) {
            command.add(word.replace("/opt/java/bin/java", linkedJava.toString()).replace(IMAGE_ARCHIVE,
                    archive.toString()).replace(IMAGE_JAR, DaemonProcess.jar().toString()));
        }
        command.add(1, "-Xlog:cds=info,aot=info,class+load=info:file=" + log);
        command.add("demo");
        Result result = run(command, env, "demo as the image launches it (" + name + ")");
        String cds = Files.readString(log);
        assertThat(cds).as("-Xlog:cds of the launch (%s)", name)
                .contains("Opened shared archive file " + archive)
                .contains("Loaded heap")
                .doesNotContain("[warning]", "[error]");
        assertThat(archivedShare(cds)).as("share of demo's classes from the archive (%s); below %s, run"
                + " scripts/record-classlist.sh", name, MIN_ARCHIVED_SHARE).isGreaterThanOrEqualTo(MIN_ARCHIVED_SHARE);
        assertThat(result.out()).contains("demo finished");
        assertThat(result.err().lines().filter(line -> line.toLowerCase(Locale.ROOT).contains("warning")
                || line.contains("[error]")).toList()).as("warnings on stderr; all of it:%n%s", result.err()).isEmpty();
    }

    /** Of the classes a {@code -Xlog:class+load} log shows loaded, the share that came from the class-data archive. */
    static double archivedShare(String log) {
        long loaded = log.lines().filter(line -> line.contains(" source: ")).count();
        long archived = log.lines().filter(line -> line.endsWith(" source: shared objects file")).count();
        assertThat(loaded).as("classes loaded, in the -Xlog:class+load output").isPositive();
        return (double) archived / loaded;
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
