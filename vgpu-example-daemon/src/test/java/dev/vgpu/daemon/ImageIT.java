package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.Resource;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.serve.ServeOptions;
import dev.vgpu.daemon.scan.Samples;
import dev.vgpu.kubelet.standin.StandInKubelet;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The built image, run with podman in the form each install route starts it (docs/BUILD.md, "The image"): the
 * kustomize and Helm DaemonSets' arguments, environment and security context, and the GPU Operator slot's three forms
 * (no arguments; option-only arguments; the old {@code command: nvidia-kubevirt-gpu-device-plugin} with arguments).
 * Each serves a real-layout sample host mounted where that route mounts the host (under {@code /host}, or over the
 * slot's {@code /sys} and {@code /dev/vfio}) to the stand-in kubelet on a mounted device-plugin directory: every
 * resource the host has registers, one Allocate succeeds, the probes answer 200, the class-data archive is in use
 * (most classes come from it), and SIGTERM ends the container with exit code 0 and no plugin socket left.
 *
 * <p>Not part of a plain {@code mvn verify} (the failsafe configuration excludes it): {@code .ci/run} builds the image
 * with {@code scripts/build-image.sh} and then runs this class by name ({@code -Dit.test=ImageIT}), so a machine
 * without podman still passes {@code mvn verify}, while a missing podman or image here is a failure, never a skip.
 *
 * <p>Threads: the test thread only; containers are child processes of podman, each stand-in kubelet serves on its own
 * gRPC threads and is closed by the test.
 */
class ImageIT {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    private static final String VERSION = System.getProperty("vgpu.version");
    private static final String IMAGE = System.getProperty("vgpu.image", "localhost/vgpu-device-plugin:" + VERSION);
    /** The budgets this test holds the image to (measured: 145 MB unpacked, 79 MB archived; docs/BUILD.md). */
    private static final long MAX_IMAGE_BYTES = 175_000_000L;
    private static final long MAX_ARCHIVE_BYTES = 95_000_000L;
    private static final Duration WAIT = Duration.ofSeconds(90);

    private static Samples.Materialized host;
    private static Map<String, List<String>> expected;

    @TempDir
    static Path work;

    @BeforeAll
    static void podmanTheImageAndASampleHost() throws Exception {
        Result version = podman(30, "--version");
        assertThat(version.code()).as("podman --version: %s", version).isZero();
        Result exists = podman(30, "image", "exists", IMAGE);
        assertThat(exists.code()).as("the image %s is missing: build it with scripts/build-image.sh", IMAGE).isZero();
        host = Samples.materialize(Samples.H200_SRIOV);
        HostOptions options = new HostOptions(null, null, true);
        Host sample = Host.of(host.root()).withPciIds(Samples.pciIdsFor(options).names());
        expected = new TreeMap<>();
        for (Resource resource : new Scanner(sample, DeviceSources.load(), DeviceRules::none).run(Snapshot.empty())
                .snapshot().resources().values()) {
            expected.put(resource.name().fullName(), resource.devices().stream().map(d -> d.id()).sorted().toList());
        }
        assertThat(expected).as("the sample host's resources").hasSizeGreaterThanOrEqualTo(2);
    }

    @AfterAll
    static void removeTheSampleHost() {
        if (host != null) {
            host.close();
        }
    }

    @Test
    void theImageIsWithinItsBudgetRunsAsRootWithItsLabelsAndShipsNoPciIds() throws Exception {
        JsonNode image = new ObjectMapper().readTree(podman(30, "image", "inspect", IMAGE).ok()).get(0);
        assertThat(image.path("Size").asLong()).as("image size, bytes").isPositive().isLessThan(MAX_IMAGE_BYTES);
        Path archive = REPO.resolve("target/vgpu-device-plugin-" + VERSION + ".oci.tar");
        assertThat(archive).as("the OCI archive scripts/build-image.sh writes").isRegularFile();
        assertThat(Files.size(archive)).as("OCI archive size, bytes").isLessThan(MAX_ARCHIVE_BYTES);
        JsonNode config = image.path("Config");
        assertThat(config.path("User").asText()).as("the image's user, which the manifests' runAsUser names")
                .isEqualTo("0:0");
        assertThat(DeployManifestsTest.strings(config.path("Entrypoint"))).containsExactly("/opt/vgpu/bin/vgpu-daemon");
        assertThat(config.path("Cmd").isMissingNode() || config.path("Cmd").isNull() || config.path("Cmd").isEmpty())
                .as("no CMD: without arguments the daemon serves").isTrue();
        Map<String, String> labels = DeployManifestsTest.labels(config.path("Labels"));
        assertThat(labels).containsEntry("org.opencontainers.image.version", VERSION)
                .containsEntry("org.opencontainers.image.title", "vgpu-device-plugin")
                .containsEntry("org.opencontainers.image.licenses", "Apache-2.0")
                .containsKeys("org.opencontainers.image.revision", "org.opencontainers.image.source",
                        "org.opencontainers.image.description");
        String check = "for f in " + String.join(" ", HostOptions.DEFAULT_PCI_IDS.stream().map(Path::toString)
                .toList()) + "; do if [ -e $f ]; then echo $f; fi; done; echo checked";
        assertThat(podman(30, "run", "--rm", "--network=none", "--entrypoint", "/bin/sh", IMAGE, "-c", check).ok())
                .as("pci.ids files in the image").isEqualTo("checked\n");
    }

    @Test
    void versionDemoAndDiscoverRunOnAReadOnlyRootAsTheManifestsUser() throws Exception {
        List<String> run = List.of("run", "--rm", "--network=none", "--read-only", "--user=0:0", "--cap-drop=ALL",
                "--security-opt=no-new-privileges", IMAGE);
        assertThat(podman(60, concat(run, "--version")).ok()).contains("vgpu-daemon " + VERSION, "Java runtime: 25");
        assertThat(podman(120, concat(run, "demo")).ok()).contains("demo finished");
        JsonNode report = new ObjectMapper().readTree(podman(60, concat(run, "discover", "--sample",
                Samples.H200_SRIOV, "--format", "json", "--no-nvml")).ok());
        List<String> names = new ArrayList<>();
        report.path("resources").forEach(r -> names.add(r.path("resource").asText()));
        assertThat(names).containsExactlyElementsOf(expected.keySet());
    }

    /** How a route starts the container: podman options (mounts, user, security), the entrypoint, the arguments. */
    record Form(String name, List<String> options, List<String> command) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Form> forms() throws Exception {
        JsonNode kustomized = DeployManifestsTest.kustomize(REPO.resolve("deploy/overlays/default"),
                Files.createTempDirectory("vgpu-image-it-")).stream()
                .filter(o -> o.path("kind").asText().equals("DaemonSet")).findFirst().orElseThrow();
        JsonNode helmed = HelmChartTest.daemonSet(HelmChartTest.template(Map.of()));
        List<String> slot = List.of("--privileged", "--env=NODE_NAME=node-1", "--env=POD_NAMESPACE=gpu-operator");
        return Stream.of(
                daemonSetForm("kustomize (deploy/overlays/default)", kustomized),
                daemonSetForm("helm (deploy/helm/vgpu, default values)", helmed),
                new Form("gpu-operator slot, no args", slot, List.of()),
                new Form("gpu-operator slot, option-only args", slot, List.of("--rescan-interval=30s")),
                new Form("gpu-operator slot, command nvidia-kubevirt-gpu-device-plugin", concat(slot,
                        "--entrypoint=nvidia-kubevirt-gpu-device-plugin"), List.of("--rescan-interval=30s")));
    }

    /** A DaemonSet's container as podman options: its security context, its environment, its arguments. */
    private static Form daemonSetForm(String name, JsonNode daemonSet) {
        JsonNode c = DeployManifestsTest.container(daemonSet);
        JsonNode security = c.path("securityContext");
        List<String> options = new ArrayList<>(List.of("--user=" + security.path("runAsUser").asText() + ":"
                + security.path("runAsGroup").asText()));
        assertThat(security.path("readOnlyRootFilesystem").asBoolean()).isTrue();
        options.add("--read-only");
        assertThat(DeployManifestsTest.strings(security.at("/capabilities/drop"))).containsExactly("ALL");
        options.add("--cap-drop=ALL");
        assertThat(security.path("allowPrivilegeEscalation").asBoolean(true)).isFalse();
        options.add("--security-opt=no-new-privileges");
        DeployManifestsTest.env(c).forEach((key, value) -> options.add("--env=" + key + "=" + value));
        return new Form(name, options, DeployManifestsTest.strings(c.path("args")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("forms")
    void servesTheMountedHostToTheKubeletAsEachRouteStartsItAndStopsWithZeroOnSigterm(Form form) throws Exception {
        Path plugins = Files.createDirectories(Files.createTempDirectory("vgpu-dp-"));
        Path state = Files.createDirectories(work.resolve("state-" + Math.abs(form.name().hashCode())));
        Path cdi = Files.createDirectories(work.resolve("cdi-" + Math.abs(form.name().hashCode())));
        boolean slot = form.options().contains("--privileged");
        // The daemon listens on its default port inside the container's own network; podman publishes it on an
        // ephemeral port of the host (the empty host port), so nothing here binds a fixed port beside a daemon.
        String inside = ServeOptions.DEFAULT_METRICS_ADDRESS.substring(
                ServeOptions.DEFAULT_METRICS_ADDRESS.lastIndexOf(':') + 1);
        List<String> run = new ArrayList<>(List.of("run", "--detach", "--publish=127.0.0.1::" + inside,
                // the class-data archive's log and where each class came from, in the container's output (the only
                // flags this test adds)
                "--env=JAVA_TOOL_OPTIONS=-Xlog:cds=info,aot=info,class+load=info"));
        run.addAll(form.options());
        if (slot) {
            // The slot's host paths, at the same paths in the container; the host's /sys and /dev/vfio are the sample.
            run.addAll(List.of("--volume=" + host.root().resolve("sys") + ":/sys",
                    "--volume=" + host.root().resolve("dev/vfio") + ":/dev/vfio:ro",
                    "--volume=" + plugins + ":/var/lib/kubelet/device-plugins", "--volume=" + cdi + ":/var/run/cdi"));
        } else {
            run.addAll(List.of("--volume=" + host.root().resolve("sys") + ":/host/sys:ro",
                    "--volume=" + host.root().resolve("dev") + ":/host/dev:ro",
                    "--volume=" + plugins + ":/var/lib/kubelet/device-plugins", "--volume=" + state + ":/var/lib/vgpu"));
        }
        run.add(IMAGE);
        run.addAll(form.command());
        try (StandInKubelet kubelet = StandInKubelet.start(plugins)) {
            String id = podman(60, run.toArray(String[]::new)).ok().strip();
            try {
                kubelet.await(WAIT, k -> k.resources().keySet().containsAll(expected.keySet()));
                assertThat(new TreeSet<>(kubelet.resources().keySet())).as("%s: resources; log:%n%s", form, logs(id))
                        .containsExactlyElementsOf(expected.keySet());
                String resource = expected.keySet().iterator().next();
                String device = expected.get(resource).get(0);
                var allocation = kubelet.allocation(resource, List.of(device));
                assertThat(allocation.envs()).as("%s: Allocate's env", form).containsValue(device);
                assertThat(allocation.hostPaths()).as("%s: Allocate's device nodes", form).contains("/dev/vfio/vfio");

                String port = podman(30, "port", id, inside + "/tcp").ok().strip();
                String base = "http://" + port.substring(port.lastIndexOf('\n') + 1);
                assertThat(get(base + "/healthz")).as("%s: /healthz", form).isEqualTo(200);
                org.awaitility.Awaitility.await().atMost(WAIT).until(() -> get(base + "/readyz") == 200);

                assertThat(podman(30, "kill", "--signal=TERM", id).code()).isZero();
                assertThat(podman(120, "wait", id).ok().strip()).as("%s: exit code after SIGTERM; log:%n%s", form,
                        logs(id)).isEqualTo("0");
                String log = logs(id);
                assertThat(log).as("%s: the class-data archive", form).contains(
                        "Opened shared archive file /opt/vgpu/vgpu-daemon.jsa", "Loaded heap");
                assertThat(log).doesNotContain("[error][cds]", "[warning][cds]", "[error][aot]", "[warning][aot]");
                assertThat(RuntimeImageIT.archivedShare(log)).as("%s: share of the classes loaded that came from the"
                        + " archive; below %s, run scripts/record-classlist.sh", form,
                        RuntimeImageIT.MIN_ARCHIVED_SHARE).isGreaterThanOrEqualTo(RuntimeImageIT.MIN_ARCHIVED_SHARE);
                try (var left = Files.list(plugins)) {
                    assertThat(left.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("kubevirt-")))
                            .as("%s: plugin sockets after SIGTERM", form).isEmpty();
                }
            } finally {
                podman(60, "rm", "--force", id);
            }
        }
    }

    /** The slot has no probes: a daemon that cannot start must exit non-zero, saying why, rather than linger. */
    @Test
    void aFatalStartErrorExitsNonZeroInTheSlot() throws Exception {
        Result result = podman(60, "run", "--rm", "--network=none", "--privileged", IMAGE, "--rescan-interval=soon");
        assertThat(result.code()).as("exit code; %s", result).isEqualTo(2);
        assertThat(result.err()).contains("--rescan-interval");
    }

    private static int get(String url) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String logs(String id) throws Exception {
        Result logs = podman(30, "logs", id);
        return logs.out() + logs.err();
    }

    private static List<String> concat(List<String> first, String... more) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(more));
        return all;
    }

    record Result(int code, String out, String err) {
        /** The output of a command that must have exited 0. */
        String ok() {
            assertThat(code).as("podman exit code; stderr:%n%s", err).isZero();
            return out;
        }
    }

    private static Result podman(long seconds, List<String> args) throws Exception {
        return podman(seconds, args.toArray(String[]::new));
    }

    /**
     * Runs podman with {@code target/image/containers.conf} (runc and this machine's ulimits, which
     * scripts/build-image.sh writes) unless CONTAINERS_CONF names another.
     */
    private static Result podman(long seconds, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("podman"));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(work, "podman-", ".out");
        Path err = Files.createTempFile(work, "podman-", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        Path conf = REPO.resolve("target/image/containers.conf");
        if (System.getenv("CONTAINERS_CONF") == null && Files.exists(conf)) {
            builder.environment().put("CONTAINERS_CONF", conf.toString());
        }
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new AssertionError("podman is needed to run the image (apt-get install -y podman buildah skopeo"
                    + " mmdebstrap runc uidmap; .ci/run installs them): " + e.getMessage(), e);
        }
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("podman " + args[0] + " still running after " + seconds + " s: " + command);
        }
        return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
    }
}
