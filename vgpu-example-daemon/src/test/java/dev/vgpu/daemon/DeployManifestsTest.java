package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vgpu.daemon.cli.CliParser;
import dev.vgpu.daemon.serve.ServeOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Renders {@code deploy/overlays/*} with {@code kubectl kustomize} (as a user would) and checks every rendered
 * object, and that kustomize warns about nothing (no deprecated field). Without kubectl on the PATH, or with one whose
 * kustomize is older than v3.7 (no components), this fails: {@code .ci/run} installs a current one when needed.
 */
class DeployManifestsTest {

    private static final String DEFAULT = "vgpu-device-plugin";
    private static final String NVML = "vgpu-device-plugin-nvml";
    private static final String METRICS_PORT =
            ServeOptions.DEFAULT_METRICS_ADDRESS.substring(ServeOptions.DEFAULT_METRICS_ADDRESS.lastIndexOf(':') + 1);

    /** The overlays that render a DaemonSet; {@code nvml-runtimeclass} replaces {@code nvml}, never beside it. */
    static final List<String> DAEMONSETS = List.of("default", "nvml", "nvml-runtimeclass");
    /** The components of {@code deploy/components} and where each makes the NVML variant find the library. */
    static final Map<String, String> LIBRARY_COMPONENTS = Map.of(
            "nvml-library-aarch64", "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
            "nvml-library-gpu-operator", "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            "nvml-library-gpu-operator-aarch64", "/run/nvidia/driver/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1");

    static Map<String, List<JsonNode>> rendered = new TreeMap<>();
    static Map<String, String> warnings = new TreeMap<>();

    @BeforeAll
    static void render(@TempDir Path tmp) throws Exception {
        Path deploy = Path.of("").toAbsolutePath().getParent().resolve("deploy");
        assertThat(deploy.resolve("overlays")).as("the repository's deploy/overlays").isDirectory();
        try (var overlays = Files.list(deploy.resolve("overlays"))) {
            // dra and dra/examples: DraManifestsTest checks what they render; kustomizeWarnsAboutNothing here.
            assertThat(overlays.map(p -> p.getFileName().toString()).sorted().toList()).as("every overlay is checked")
                    .containsExactly("default", "dra", "monitoring", "nvml", "nvml-runtimeclass");
        }
        for (String overlay : List.of("default", "nvml", "nvml-runtimeclass", "monitoring", "dra", "dra/examples")) {
            rendered.put(overlay, kustomize(deploy.resolve("overlays").resolve(overlay), tmp));
        }
        try (var components = Files.list(deploy.resolve("components"))) {
            assertThat(components.map(p -> p.getFileName().toString()).sorted().toList())
                    .as("every component is checked").containsExactlyElementsOf(new java.util.TreeSet<>(
                            LIBRARY_COMPONENTS.keySet()));
        }
        // As the components' comments say: an overlay of one's own on top of overlays/nvml adds one of them.
        Path own = Files.createDirectories(Path.of("target", "kustomize-own-overlays").toAbsolutePath());
        for (String component : LIBRARY_COMPONENTS.keySet()) {
            Path dir = Files.createDirectories(own.resolve(component));
            Files.writeString(dir.resolve("kustomization.yaml"), "resources:\n  - "
                    + dir.relativize(deploy.resolve("overlays/nvml")) + "\ncomponents:\n  - "
                    + dir.relativize(deploy.resolve("components").resolve(component)) + "\n");
            rendered.put("nvml+" + component, kustomize(dir, tmp));
        }
    }

    static List<JsonNode> kustomize(Path overlay, Path tmp) throws IOException, InterruptedException {
        Path out = tmp.resolve(overlay.getFileName() + ".yaml");
        Path err = tmp.resolve(overlay.getFileName() + ".err");
        Process kubectl;
        try {
            kubectl = new ProcessBuilder("kubectl", "kustomize", overlay.toString())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        } catch (IOException e) {
            throw new AssertionError("kubectl is needed to render deploy/overlays (.ci/run installs kubectl 1.32.3 "
                    + "when the one on the PATH is missing or too old): " + e.getMessage(), e);
        }
        if (!kubectl.waitFor(120, TimeUnit.SECONDS)) {
            kubectl.destroyForcibly();
            throw new AssertionError("kubectl kustomize " + overlay + " did not finish");
        }
        assertThat(kubectl.exitValue()).as("kubectl kustomize %s: %s", overlay, Files.readString(err)).isZero();
        warnings.put(overlay.getFileName().toString(), Files.readString(err));
        List<JsonNode> objects = new ArrayList<>();
        new ObjectMapper(new YAMLFactory()).readerFor(JsonNode.class)
                .<JsonNode>readValues(Files.readString(out, StandardCharsets.UTF_8))
                .forEachRemaining(node -> {
                    if (node != null && !node.isNull() && !node.isMissingNode()) {
                        objects.add(node);
                    }
                });
        return objects;
    }

    static JsonNode daemonSet(String overlay) {
        return only(overlay, "apps/v1", "DaemonSet");
    }

    /** The one object of this kind the overlay renders. */
    static JsonNode only(String overlay, String apiVersion, String kind) {
        List<JsonNode> objects = rendered.get(overlay).stream()
                .filter(o -> o.path("kind").asText().equals(kind)).toList();
        assertThat(objects).as("%s objects rendered by %s", kind, overlay).hasSize(1);
        assertThat(objects.get(0).path("apiVersion").asText()).isEqualTo(apiVersion);
        return objects.get(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass"})
    void eachOverlayRendersItsDaemonSetAndANetworkPolicyAndNothingElse(String overlay) {
        assertThat(rendered.get(overlay)).extracting(o -> o.path("kind").asText())
                .containsExactlyInAnyOrder("DaemonSet", "NetworkPolicy");
    }

    /**
     * Every DaemonSet's arguments are ones the daemon's own command line accepts: no option the CLI does not know, no
     * malformed value (what the daemon checks only when it runs, such as missing directories, is not asked here).
     */
    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass", "dra"})
    void theDaemonSetsArgumentsParseAsTheDaemonsCommandLine(String overlay) {
        List<String> args = strings(container(daemonSet(overlay)).path("args"));
        // Throws a UsageError for an unknown option or a value the parser or the command's conversions refuse.
        CliParser.Parsed parsed = CliParser.parse(VgpuDaemon.COMMANDS, args.toArray(String[]::new));
        assertThat(parsed.request()).isEqualTo(CliParser.Request.RUN);
        assertThat(parsed.command().name()).as("the subcommand").isEqualTo(args.get(0));
        java.io.PrintWriter none = new java.io.PrintWriter(java.io.Writer.nullWriter());
        assertThatCode(() -> VgpuDaemon.command(parsed.args(), Map.of(), none, none)).doesNotThrowAnyException();
    }

    /** No deprecated field ({@code bases}, {@code patchesStrategicMerge}): kustomize v5 would warn on stderr. */
    @Test
    void kustomizeWarnsAboutNothing() {
        assertThat(warnings).hasSize(rendered.size());
        warnings.forEach((overlay, err) -> assertThat(err).as("kubectl kustomize %s, stderr", overlay).isBlank());
    }

    /**
     * The ops port is on the pod IP: only labelled scraper namespaces may reach it (the kubelet's probes come from
     * the node, which a NetworkPolicy always admits), and only that port.
     */
    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass"})
    void onlyLabelledScraperNamespacesMayReachTheMetricsPort(String overlay) {
        JsonNode ds = daemonSet(overlay);
        JsonNode policy = only(overlay, "networking.k8s.io/v1", "NetworkPolicy");
        assertThat(policy.at("/metadata/namespace").asText()).isEqualTo(ds.at("/metadata/namespace").asText());
        assertThat(labels(ds.at("/spec/template/metadata/labels")))
                .containsAllEntriesOf(labels(policy.at("/spec/podSelector/matchLabels")));
        assertThat(policy.at("/spec/podSelector/matchLabels")).isNotEmpty();
        assertThat(policy.at("/spec/policyTypes")).extracting(JsonNode::asText).containsExactly("Ingress");
        JsonNode rules = policy.at("/spec/ingress");
        assertThat(rules).hasSize(1);
        assertThat(labels(rules.get(0).at("/from/0/namespaceSelector/matchLabels")))
                .containsExactly(Map.entry("vgpu.dev/metrics-scraper", "true"));
        assertThat(rules.get(0).at("/from")).hasSize(1);
        JsonNode ports = rules.get(0).at("/ports");
        assertThat(ports).hasSize(1);
        assertThat(ports.get(0).path("protocol").asText()).isEqualTo("TCP");
        JsonNode containerPort = container(ds).at("/ports/0");
        assertThat(ports.get(0).path("port").asText()).isIn(containerPort.path("name").asText(),
                containerPort.path("containerPort").asText());
    }

    static JsonNode container(JsonNode ds) {
        JsonNode containers = ds.at("/spec/template/spec/containers");
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    @Test
    void everyOverlayRunsTheImageTheBaseNamesOnceTaggedWithTheProjectVersion() throws IOException {
        for (String overlay : DAEMONSETS) {
            assertThat(container(daemonSet(overlay)).get("image").asText()).as(overlay)
                    .isEqualTo("vgpu-device-plugin:" + System.getProperty("vgpu.version"));
        }
        Path base = Path.of("").toAbsolutePath().getParent().resolve("deploy/base");
        assertThat(Files.readString(base.resolve("daemonset.yaml"))).as("no tag outside the images entry")
                .contains("image: vgpu-device-plugin ").doesNotContain("image: vgpu-device-plugin:");
        assertThat(Files.readString(base.resolve("kustomization.yaml"))).containsOnlyOnce("- name: vgpu-device-plugin")
                .contains("newTag: " + System.getProperty("vgpu.version"));
    }

    @Test
    void theOverlaysHaveDistinctNamesAndSelectorsThatMatchTheirOwnPodsOnly() {
        JsonNode plain = daemonSet("default");
        JsonNode nvml = daemonSet("nvml");
        assertThat(plain.at("/metadata/name").asText()).isEqualTo(DEFAULT);
        assertThat(nvml.at("/metadata/name").asText()).isEqualTo(NVML);
        for (JsonNode ds : List.of(plain, nvml)) {
            assertThat(ds.at("/metadata/namespace").asText()).isEqualTo("kube-system");
            Map<String, String> selector = labels(ds.at("/spec/selector/matchLabels"));
            assertThat(labels(ds.at("/spec/template/metadata/labels"))).containsAllEntriesOf(selector);
            assertThat(selector).containsEntry("app.kubernetes.io/instance", ds.at("/metadata/name").asText());
        }
        assertThat(labels(nvml.at("/spec/template/metadata/labels")))
                .as("the NVML pods must not match the default selector")
                .doesNotContainEntry("app.kubernetes.io/instance", DEFAULT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass"})
    void everyPodIsHardenedAndProbedOverTheMetricsPort(String overlay) {
        JsonNode ds = daemonSet(overlay);
        JsonNode pod = ds.at("/spec/template/spec");
        assertThat(pod.path("automountServiceAccountToken").isBoolean()).isTrue();
        assertThat(pod.path("automountServiceAccountToken").asBoolean()).isFalse();
        assertThat(pod.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
        JsonNode c = container(ds);
        assertThat(c.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
        // The image's user (the Dockerfile's USER 0:0), said by the pod too.
        assertThat(c.at("/securityContext/runAsUser").asText()).isEqualTo("0");
        assertThat(c.at("/securityContext/runAsGroup").asText()).isEqualTo("0");

        List<String> args = strings(c.path("args"));
        assertThat(args.get(0)).isEqualTo("serve");
        assertThat(args).contains("--host-root=/host", "--device-plugin-dir=/var/lib/kubelet/device-plugins",
                "--metrics-address=" + ServeOptions.DEFAULT_METRICS_ADDRESS);
        // The unprivileged default cannot open the NVIDIA device nodes: NVML is off there, on in the NVML variant.
        assertThat(args.contains("--no-nvml")).as(overlay + " args " + args).isEqualTo(overlay.equals("default"));

        JsonNode port = c.path("ports").get(0);
        assertThat(c.path("ports")).hasSize(1);
        assertThat(port.path("name").asText()).isEqualTo("metrics");
        assertThat(port.path("containerPort").asText()).isEqualTo(METRICS_PORT);
        assertThat(port.path("protocol").asText()).isEqualTo("TCP");
        assertThat(c.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/healthz");
        assertThat(c.at("/livenessProbe/httpGet/port").asText()).isEqualTo("metrics");
        assertThat(c.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/readyz");
        assertThat(c.at("/readinessProbe/httpGet/port").asText()).isEqualTo("metrics");

        Set<String> volumes = new HashSet<>();
        pod.path("volumes").forEach(v -> volumes.add(v.path("name").asText()));
        c.path("volumeMounts").forEach(m -> assertThat(volumes).as("volume of mount %s", m.path("mountPath"))
                .contains(m.path("name").asText()));
        assertThat(strings(c.path("volumeMounts")).toString()).contains("/var/lib/kubelet/device-plugins",
                "/host/sys", "/host/dev");
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass"})
    void theHostsDevIsMountedReadOnlyUnderTheHostRoot(String overlay) {
        JsonNode ds = daemonSet(overlay);
        String hostRoot = flag(container(ds), "--host-root");

        JsonNode mount = mountAt(container(ds), hostRoot + "/dev");
        assertThat(mount.path("readOnly").asBoolean()).as("%s: %s/dev read-only", overlay, hostRoot).isTrue();
        assertThat(hostPathOf(ds, mount).path("path").asText()).isEqualTo("/dev");
        // No narrower /dev mount under the host root: the whole /dev shows /dev/iommu, /dev/egmN and /dev/vfio/*.
        container(ds).path("volumeMounts").forEach(m -> assertThat(m.path("mountPath").asText())
                .doesNotStartWith(hostRoot + "/dev/"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass"})
    void theStateDirectoryIsAWritableHostPathOutsideTheDevicePluginDirectory(String overlay) {
        JsonNode ds = daemonSet(overlay);
        JsonNode c = container(ds);
        String state = flag(c, "--state-dir");
        String plugins = flag(c, "--device-plugin-dir");

        JsonNode mount = mountAt(c, state);
        assertThat(mount.path("readOnly").asBoolean()).as("%s: the state directory is written", overlay).isFalse();
        JsonNode hostPath = hostPathOf(ds, mount);
        assertThat(hostPath.path("path").asText()).isEqualTo("/var/lib/vgpu");
        assertThat(hostPath.path("type").asText()).isEqualTo("DirectoryOrCreate");
        JsonNode pluginHostPath = hostPathOf(ds, mountAt(c, plugins));
        for (String[] pair : new String[][] {{state, plugins},
            {hostPath.path("path").asText(), pluginHostPath.path("path").asText()}}) {
            assertThat(Path.of(pair[0]).normalize().startsWith(Path.of(pair[1]).normalize()))
                    .as("%s is inside %s", pair[0], pair[1]).isFalse();
        }
    }

    /** The value of a {@code --name=value} argument, which must be given exactly once. */
    static String flag(JsonNode container, String name) {
        List<String> values = strings(container.path("args")).stream().filter(a -> a.startsWith(name + "="))
                .map(a -> a.substring(name.length() + 1)).toList();
        assertThat(values).as("%s in the args", name).hasSize(1);
        return values.get(0);
    }

    /** The one volume mount at this path. */
    static JsonNode mountAt(JsonNode container, String path) {
        List<JsonNode> mounts = new ArrayList<>();
        container.path("volumeMounts").forEach(m -> {
            if (m.path("mountPath").asText().equals(path)) {
                mounts.add(m);
            }
        });
        assertThat(mounts).as("volume mounts at %s", path).hasSize(1);
        return mounts.get(0);
    }

    /** The hostPath of the volume a mount names. */
    static JsonNode hostPathOf(JsonNode ds, JsonNode mount) {
        for (JsonNode volume : ds.at("/spec/template/spec/volumes")) {
            if (volume.path("name").asText().equals(mount.path("name").asText())) {
                assertThat(volume.has("hostPath")).as("volume %s is a hostPath", volume.path("name")).isTrue();
                return volume.path("hostPath");
            }
        }
        throw new AssertionError("no volume named " + mount.path("name"));
    }

    @Test
    void theDefaultIsUnprivilegedWithItsOwnFootprint() {
        JsonNode c = container(daemonSet("default"));
        assertThat(c.at("/securityContext/privileged").asBoolean()).isFalse();
        assertThat(c.at("/securityContext/allowPrivilegeEscalation").isBoolean()).isTrue();
        assertThat(c.at("/securityContext/allowPrivilegeEscalation").asBoolean()).isFalse();
        assertThat(strings(c.at("/securityContext/capabilities/drop"))).containsExactly("ALL");
        assertThat(c.at("/resources").toString())
                .isEqualTo("{\"limits\":{\"memory\":\"192Mi\"},\"requests\":{\"cpu\":\"10m\",\"memory\":\"128Mi\"}}");
        // The JVM flags are the image's (deploy/image/jvm.flags): the pod sets none, so the image's apply.
        assertThat(env(c)).isEmpty();
    }

    @Test
    void theNvmlVariantIsPrivilegedAndBindsTheDriverLibraryAndListsNoGpu() {
        JsonNode ds = daemonSet("nvml");
        JsonNode c = container(ds);
        assertThat(c.at("/securityContext/privileged").asBoolean()).isTrue();
        assertThat(c.at("/securityContext").has("allowPrivilegeEscalation"))
                .as("the API refuses allowPrivilegeEscalation: false with privileged: true").isFalse();
        assertThat(c.at("/resources").toString())
                .isEqualTo("{\"limits\":{\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"10m\",\"memory\":\"144Mi\"}}");
        // The image's flags with only the heap raised: JAVA_TOOL_OPTIONS overrides the flags it names.
        assertThat(env(c)).containsOnly(Map.entry("LD_LIBRARY_PATH", "/host-driver-lib"),
                Map.entry("JAVA_TOOL_OPTIONS", "-Xmx64m"));
        Map<String, String> mounts = new TreeMap<>();
        c.path("volumeMounts").forEach(m -> mounts.put(m.path("mountPath").asText(), m.path("name").asText()));
        assertThat(mounts).containsEntry("/host-driver-lib/libnvidia-ml.so.1", "nvml-library")
                .containsEntry("/dev/nvidiactl", "nvidiactl")
                .containsEntry("/var/lib/kubelet/device-plugins", "device-plugins");
        // A privileged container gets every /dev/nvidiaN from the runtime; /dev/nvidiactl only gates the start.
        assertThat(mounts.keySet()).noneMatch(path -> path.matches("/dev/nvidia[0-9]+"));
        assertThat(hostPathOf(ds, mountAt(c, "/dev/nvidiactl")).toString())
                .isEqualTo("{\"path\":\"/dev/nvidiactl\",\"type\":\"CharDevice\"}");
        assertThat(hostPathOf(ds, mountAt(c, "/host-driver-lib/libnvidia-ml.so.1")).toString())
                .isEqualTo("{\"path\":\"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\",\"type\":\"File\"}");
    }

    /**
     * The runtime-class variant is the NVML variant without privilege and without any driver file or device mounted
     * by hand: the NVIDIA container runtime injects them. Everything else (name, nodes, arguments) is the NVML
     * variant's, since it replaces that one.
     */
    @Test
    void theRuntimeClassVariantIsTheNvmlVariantUnprivilegedWithNothingOfTheDriverMounted() {
        JsonNode ds = daemonSet("nvml-runtimeclass");
        JsonNode nvml = daemonSet("nvml");
        JsonNode pod = ds.at("/spec/template/spec");
        JsonNode c = container(ds);
        assertThat(pod.path("runtimeClassName").asText()).isEqualTo("nvidia");
        assertThat(c.at("/securityContext/privileged").asBoolean()).isFalse();
        assertThat(c.at("/securityContext/allowPrivilegeEscalation").isBoolean()).isTrue();
        assertThat(c.at("/securityContext/allowPrivilegeEscalation").asBoolean()).isFalse();
        assertThat(strings(c.at("/securityContext/capabilities/drop"))).containsExactly("ALL");
        assertThat(env(c)).containsEntry("NVIDIA_VISIBLE_DEVICES", "all")
                .containsEntry("NVIDIA_DRIVER_CAPABILITIES", "utility").doesNotContainKey("LD_LIBRARY_PATH")
                .containsEntry("JAVA_TOOL_OPTIONS", env(container(nvml)).get("JAVA_TOOL_OPTIONS"));
        c.path("volumeMounts").forEach(m -> assertThat(m.path("mountPath").asText())
                .doesNotStartWith("/dev/").doesNotStartWith("/host-driver-lib"));
        pod.path("volumes").forEach(v -> assertThat(v.at("/hostPath/path").asText())
                .doesNotContain("nvidia"));
        assertThat(ds.at("/metadata/name")).isEqualTo(nvml.at("/metadata/name"));
        assertThat(ds.at("/spec/selector")).isEqualTo(nvml.at("/spec/selector"));
        assertThat(pod.path("affinity")).isEqualTo(nvml.at("/spec/template/spec/affinity"));
        assertThat(c.path("args")).isEqualTo(container(nvml).path("args"));
    }

    /**
     * Each library component, added by an overlay on top of overlays/nvml, changes the library's host path and
     * nothing else.
     */
    @ParameterizedTest
    @ValueSource(strings = {"nvml-library-aarch64", "nvml-library-gpu-operator", "nvml-library-gpu-operator-aarch64"})
    void aLibraryComponentMovesTheNvmlLibraryAndNothingElse(String component) {
        JsonNode ds = daemonSet("nvml+" + component);
        JsonNode library = hostPathOf(ds, mountAt(container(ds), "/host-driver-lib/libnvidia-ml.so.1"));
        assertThat(library.path("path").asText()).isEqualTo(LIBRARY_COMPONENTS.get(component));
        assertThat(library.path("type").asText()).isEqualTo("File");
        String expected = daemonSet("nvml").toString().replace("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                LIBRARY_COMPONENTS.get(component));
        assertThat(ds.toString()).isEqualTo(expected);
        assertThat(rendered.get("nvml+" + component)).hasSameSizeAs(rendered.get("nvml"));
    }

    /**
     * The optional monitoring overlay: a PodMonitor whose selector, namespace and port are those of every variant's
     * pods, scraping {@code /metrics}.
     */
    @Test
    void thePodMonitorScrapesTheMetricsPortOfEveryVariantsPods() {
        assertThat(rendered.get("monitoring")).extracting(o -> o.path("kind").asText()).containsExactly("PodMonitor");
        JsonNode monitor = only("monitoring", "monitoring.coreos.com/v1", "PodMonitor");
        Map<String, String> selector = labels(monitor.at("/spec/selector/matchLabels"));
        assertThat(selector).isNotEmpty();
        JsonNode endpoints = monitor.at("/spec/podMetricsEndpoints");
        assertThat(endpoints).hasSize(1);
        assertThat(endpoints.get(0).path("path").asText()).isEqualTo("/metrics");
        for (String overlay : DAEMONSETS) {
            JsonNode ds = daemonSet(overlay);
            assertThat(labels(ds.at("/spec/template/metadata/labels"))).as(overlay).containsAllEntriesOf(selector);
            assertThat(strings(monitor.at("/spec/namespaceSelector/matchNames")))
                    .contains(ds.at("/metadata/namespace").asText());
            assertThat(endpoints.get(0).path("port").asText()).isEqualTo(container(ds).at("/ports/0/name").asText());
        }
    }

    /** Node labels → which DaemonSets the scheduler places there: at most one, and the right one. */
    @ParameterizedTest
    @ValueSource(strings = {
        "vm-passthrough|        | default",
        "vm-vgpu       |        | default",
        "vm-vgpu       | true   | nvml",
        "vm-passthrough| true   | ",
        "vm-vgpu       | false  | default",
        "container     |        | ",
        "container     | true   | ",
        "              |        | ",
    })
    void eachVmNodeRunsExactlyOneVariant(String row) {
        String[] cells = row.split("\\|", -1);
        Map<String, String> node = new TreeMap<>();
        if (!cells[0].isBlank()) {
            node.put("nvidia.com/gpu.workload.config", cells[0].strip());
        }
        if (!cells[1].isBlank()) {
            node.put("vgpu.dev/nvml", cells[1].strip());
        }
        List<String> placed = new ArrayList<>();
        for (String overlay : List.of("default", "nvml")) {
            if (schedulable(daemonSet(overlay).at("/spec/template/spec"), node)) {
                placed.add(overlay);
            }
        }
        assertThat(placed).as("variants placed on a node labelled %s", node)
                .isEqualTo(cells[2].isBlank() ? List.of() : List.of(cells[2].strip()));
    }

    /** The scheduler's rule for nodeSelector and required node affinity (terms ORed, expressions ANDed). */
    static boolean schedulable(JsonNode pod, Map<String, String> node) {
        if (!labels(pod.path("nodeSelector")).entrySet().stream()
                .allMatch(e -> e.getValue().equals(node.get(e.getKey())))) {
            return false;
        }
        JsonNode terms = pod.at("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
        if (terms.isMissingNode()) {
            return true;
        }
        for (JsonNode term : terms) {
            boolean all = true;
            for (JsonNode expression : term.path("matchExpressions")) {
                all &= matches(expression, node);
            }
            if (all) {
                return true;
            }
        }
        return false;
    }

    static boolean matches(JsonNode expression, Map<String, String> node) {
        String value = node.get(expression.path("key").asText());
        List<String> values = strings(expression.path("values"));
        return switch (expression.path("operator").asText()) {
            case "In" -> value != null && values.contains(value);
            case "NotIn" -> value == null || !values.contains(value);
            case "Exists" -> value != null;
            case "DoesNotExist" -> value == null;
            default -> throw new AssertionError("operator not modelled here: " + expression);
        };
    }

    static Map<String, String> env(JsonNode container) {
        Map<String, String> env = new TreeMap<>();
        container.path("env").forEach(e -> env.put(e.path("name").asText(), e.path("value").asText()));
        return env;
    }

    static Map<String, String> labels(JsonNode object) {
        Map<String, String> map = new TreeMap<>();
        object.properties().forEach(e -> map.put(e.getKey(), e.getValue().asText()));
        return map;
    }

    static List<String> strings(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(n -> list.add(n.isValueNode() ? n.asText() : n.toString()));
        return list;
    }
}
