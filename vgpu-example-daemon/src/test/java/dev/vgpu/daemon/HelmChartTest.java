package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import dev.vgpu.daemon.cli.CliParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Helm chart {@code deploy/helm/vgpu}, rendered by Helm itself (helm-java: Helm's Go library, no binary): it lints
 * clean, renders every values set it supports, gives the same DaemonSet as the kustomize overlay of the same choice
 * (arguments, environment, mounts and volumes, security contexts, resources, probes, node selection), and every
 * DaemonSet it renders passes the daemon's own command-line parser.
 */
class HelmChartTest {

    static final Path CHART = Path.of("").toAbsolutePath().getParent().resolve("deploy/helm/vgpu");
    private static final Path OVERLAYS = CHART.getParent().getParent().resolve("overlays");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** The values sets the chart supports, by name; HELM_VALUES_SETS lists the same in the README. */
    static final Map<String, Map<String, Object>> VALUES = new TreeMap<>(Map.of(
            "default", Map.of(),
            "nvml", Map.of("nvml.enabled", "true"),
            "nvml-runtimeclass", Map.of("nvml.enabled", "true", "nvml.runtimeClassName", "nvidia"),
            "dra", Map.of("mode", "dra"),
            "gpu-operator-nodes", Map.of("nodeSelection", "gpu-operator"),
            "config", Map.of("config.version", "v1", "config.exclude[0].address", "0000:65:00.0"),
            "digest-and-monitoring", Map.of("image.repository", "registry.example.com/vgpu/vgpu-device-plugin",
                    "image.digest", "sha256:" + "ab".repeat(32), "monitoring.podMonitor.enabled", "true"),
            "custom-nodes", Map.of("nodeSelection", "none", "nodeSelector.gpu", "vm", "networkPolicy.enabled",
                    "false", "rescanInterval", "60s", "priorityClassName", "")));

    @TempDir
    static Path tmp;

    /** Which kustomize overlay each values set must match. */
    private static final Map<String, String> TWINS = Map.of("default", "default", "nvml", "nvml",
            "nvml-runtimeclass", "nvml-runtimeclass", "dra", "dra");

    private static Map<String, List<JsonNode>> kustomized = new TreeMap<>();

    @BeforeAll
    static void renderTheOverlays() throws Exception {
        for (String overlay : TWINS.values()) {
            kustomized.put(overlay, DeployManifestsTest.kustomize(OVERLAYS.resolve(overlay), tmp));
        }
    }

    /** {@code helm template} of the chart with {@code --set} values, in the release vgpu-device-plugin, kube-system. */
    static List<JsonNode> template(Map<String, Object> values) throws IOException {
        TemplateCommand command = new Helm(CHART).template().withName("vgpu-device-plugin")
                .withNamespace("kube-system");
        values.forEach(command::set);
        return parse(command.call());
    }

    static List<JsonNode> parse(String yaml) throws IOException {
        List<JsonNode> objects = new ArrayList<>();
        YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml).forEachRemaining(node -> {
            if (node != null && !node.isNull() && !node.isMissingNode()) {
                objects.add(node);
            }
        });
        return objects;
    }

    static JsonNode daemonSet(List<JsonNode> objects) {
        List<JsonNode> found = objects.stream().filter(o -> o.path("kind").asText().equals("DaemonSet")).toList();
        assertThat(found).as("DaemonSets rendered").hasSize(1);
        return found.get(0);
    }

    static java.util.stream.Stream<String> valuesSets() {
        return VALUES.keySet().stream();
    }

    @Test
    void lintsCleanInStrictMode() {
        LintResult lint = new Helm(CHART).lint().strict().call();
        assertThat(lint.isFailed()).as("helm lint --strict: %s", lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).as("helm lint --strict").noneMatch(m -> m.contains("[WARNING]")
                || m.contains("[ERROR]"));
    }

    @Test
    void theChartsVersionIsTheProjects() throws IOException {
        JsonNode chart = YAML.readTree(CHART.resolve("Chart.yaml").toFile());
        assertThat(chart.path("name").asText()).isEqualTo("vgpu");
        assertThat(chart.path("version").asText()).isEqualTo(System.getProperty("vgpu.version"));
        assertThat(chart.path("appVersion").asText()).isEqualTo(System.getProperty("vgpu.version"));
    }

    /** As DeployManifestsTest does for the overlays: Helm's args are ones the daemon's own command line accepts. */
    @ParameterizedTest
    @MethodSource("valuesSets")
    void everyRenderedDaemonSetsArgumentsParseAsTheDaemonsCommandLine(String set) throws IOException {
        List<String> args = DeployManifestsTest.strings(DeployManifestsTest.container(daemonSet(template(
                VALUES.get(set)))).path("args"));
        CliParser.Parsed parsed = CliParser.parse(VgpuDaemon.COMMANDS, args.toArray(String[]::new));
        assertThat(parsed.request()).isEqualTo(CliParser.Request.RUN);
        assertThat(parsed.command().name()).isEqualTo("serve");
        java.io.PrintWriter none = new java.io.PrintWriter(java.io.Writer.nullWriter());
        assertThatCode(() -> VgpuDaemon.command(parsed.args(), Map.of(), none, none)).doesNotThrowAnyException();
    }

    /** The chart and the overlay of the same choice give the same pod: what the daemon and the node see. */
    @ParameterizedTest
    @ValueSource(strings = {"default", "nvml", "nvml-runtimeclass", "dra"})
    void rendersTheSameDaemonSetAsItsKustomizeOverlay(String set) throws IOException {
        JsonNode helm = daemonSet(template(VALUES.get(set)));
        JsonNode kustomize = daemonSet(kustomized.get(TWINS.get(set)));
        JsonNode hc = DeployManifestsTest.container(helm);
        JsonNode kc = DeployManifestsTest.container(kustomize);
        for (String field : List.of("args", "env", "securityContext", "resources", "livenessProbe", "readinessProbe",
                "ports")) {
            assertThat(hc.path(field)).as("%s: container %s", set, field).isEqualTo(kc.path(field));
        }
        assertThat(byName(hc.path("volumeMounts"), "mountPath")).as("%s: mounts", set)
                .isEqualTo(byName(kc.path("volumeMounts"), "mountPath"));
        assertThat(byName(helm.at("/spec/template/spec/volumes"), "name")).as("%s: volumes", set)
                .isEqualTo(byName(kustomize.at("/spec/template/spec/volumes"), "name"));
        for (String field : List.of("securityContext", "affinity", "tolerations", "priorityClassName",
                "automountServiceAccountToken", "runtimeClassName")) {
            assertThat(helm.at("/spec/template/spec/" + field)).as("%s: pod %s", set, field)
                    .isEqualTo(kustomize.at("/spec/template/spec/" + field));
        }
        assertThat(hc.path("image").asText()).isEqualTo(kc.path("image").asText());
        assertThat(helm.at("/metadata/namespace")).isEqualTo(kustomize.at("/metadata/namespace"));
    }

    /** DRA mode brings its ServiceAccount, RBAC and DeviceClass, with the overlay's rules. */
    @Test
    void draModeBringsTheOverlaysRbacAndDeviceClass() throws IOException {
        List<JsonNode> helm = template(VALUES.get("dra"));
        for (String kind : List.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DeviceClass")) {
            JsonNode mine = only(helm, kind);
            JsonNode theirs = only(kustomized.get("dra"), kind);
            for (String field : List.of("rules", "spec", "roleRef/kind", "roleRef/apiGroup")) {
                assertThat(mine.at("/" + field)).as("%s %s", kind, field).isEqualTo(theirs.at("/" + field));
            }
        }
        JsonNode ds = daemonSet(helm);
        assertThat(ds.at("/spec/template/spec/serviceAccountName").asText())
                .isEqualTo(only(helm, "ServiceAccount").at("/metadata/name").asText());
        assertThat(only(helm, "ClusterRoleBinding").at("/subjects/0/name").asText())
                .isEqualTo(only(helm, "ServiceAccount").at("/metadata/name").asText());
    }

    @Test
    void nodeSelectionGpuOperatorSelectsTheNodesTheOperatorMarksForVmWorkloads() throws IOException {
        JsonNode pod = daemonSet(template(VALUES.get("gpu-operator-nodes"))).at("/spec/template/spec");
        // A node of the operator's sandboxWorkloads.defaultWorkload: no workload label, the operator's deploy labels.
        Map<String, String> defaultWorkloadNode = Map.of("nvidia.com/gpu.deploy.sandbox-validator", "true",
                "nvidia.com/gpu.deploy.sandbox-device-plugin", "false");
        assertThat(DeployManifestsTest.schedulable(pod, defaultWorkloadNode)).isTrue();
        assertThat(DeployManifestsTest.schedulable(pod, Map.of("nvidia.com/gpu.deploy.sandbox-validator", "true",
                "vgpu.dev/nvml", "true"))).as("an NVML node").isFalse();
        assertThat(DeployManifestsTest.schedulable(pod, Map.of("nvidia.com/gpu.deploy.device-plugin", "true")))
                .as("a container-workload node").isFalse();
        JsonNode byLabel = daemonSet(template(VALUES.get("default"))).at("/spec/template/spec");
        assertThat(DeployManifestsTest.schedulable(byLabel, defaultWorkloadNode))
                .as("the default selection misses such a node, hence the value").isFalse();
        JsonNode nvml = daemonSet(template(Map.of("nodeSelection", "gpu-operator", "nvml.enabled", "true")))
                .at("/spec/template/spec");
        assertThat(DeployManifestsTest.schedulable(nvml, Map.of("nvidia.com/gpu.deploy.vgpu-manager", "true",
                "vgpu.dev/nvml", "true"))).isTrue();
        assertThat(DeployManifestsTest.schedulable(nvml, Map.of("nvidia.com/gpu.deploy.sandbox-validator", "true",
                "vgpu.dev/nvml", "true"))).as("a passthrough node labelled for NVML").isFalse();
    }

    @Test
    void theConfigurationBecomesAConfigMapNamedByVgpuConfigThatRollsThePods() throws IOException {
        List<JsonNode> objects = template(VALUES.get("config"));
        JsonNode map = only(objects, "ConfigMap");
        JsonNode config = YAML.readTree(map.at("/data/config.yaml").asText());
        assertThat(config.path("version").asText()).isEqualTo("v1");
        assertThat(config.at("/exclude/0/address").asText()).isEqualTo("0000:65:00.0");
        JsonNode ds = daemonSet(objects);
        JsonNode c = DeployManifestsTest.container(ds);
        assertThat(DeployManifestsTest.env(c)).containsEntry("VGPU_CONFIG", "/etc/vgpu/config.yaml");
        assertThat(DeployManifestsTest.mountAt(c, "/etc/vgpu").path("readOnly").asBoolean()).isTrue();
        assertThat(ds.at("/spec/template/metadata/annotations/checksum~1config").asText()).hasSize(64);
        assertThat(ds.at("/spec/template/spec/volumes").toString()).contains(map.at("/metadata/name").asText());
    }

    @Test
    void imageByDigestAndThePodMonitor() throws IOException {
        List<JsonNode> objects = template(VALUES.get("digest-and-monitoring"));
        assertThat(DeployManifestsTest.container(daemonSet(objects)).path("image").asText())
                .isEqualTo("registry.example.com/vgpu/vgpu-device-plugin@sha256:" + "ab".repeat(32));
        JsonNode monitor = only(objects, "PodMonitor");
        assertThat(DeployManifestsTest.labels(daemonSet(objects).at("/spec/template/metadata/labels")))
                .containsAllEntriesOf(DeployManifestsTest.labels(monitor.at("/spec/selector/matchLabels")));
        assertThat(monitor.at("/spec/podMetricsEndpoints/0/port").asText()).isEqualTo("metrics");
    }

    @Test
    void customNodesWithoutNetworkPolicyWithRescans() throws IOException {
        List<JsonNode> objects = template(VALUES.get("custom-nodes"));
        assertThat(objects).noneMatch(o -> o.path("kind").asText().equals("NetworkPolicy"));
        JsonNode pod = daemonSet(objects).at("/spec/template/spec");
        assertThat(pod.has("affinity")).isFalse();
        assertThat(pod.has("priorityClassName")).isFalse();
        assertThat(DeployManifestsTest.labels(pod.path("nodeSelector"))).containsExactly(Map.entry("gpu", "vm"));
        assertThat(DeployManifestsTest.env(DeployManifestsTest.container(daemonSet(objects))))
                .containsEntry("VFIO_VGPU_RESCAN_INTERVAL", "60s");
    }

    @Test
    void nonsenseIsRefusedNamingTheValue() {
        assertThatThrownBy(() -> template(Map.of("mode", "both"))).hasMessageContaining("mode \"both\"");
        assertThatThrownBy(() -> template(Map.of("mode", "dra", "nvml.enabled", "true")))
                .hasMessageContaining("nvml.enabled");
        assertThatThrownBy(() -> template(Map.of("nodeSelection", "all"))).hasMessageContaining("nodeSelection");
    }

    /** The packaged chart ({@code HelmPackage}, at {@code package}) renders what the directory renders. */
    @Test
    void thePackagedChartRendersLikeTheDirectory() throws IOException {
        Path packaged = HelmPackage.packageChart(CHART, tmp.resolve("packaged"));
        assertThat(packaged.getFileName().toString()).isEqualTo("vgpu-" + System.getProperty("vgpu.version") + ".tgz");
        String fromArchive = Helm.template(packaged.toString()).withName("vgpu-device-plugin")
                .withNamespace("kube-system").call();
        assertThat(parse(fromArchive)).isEqualTo(template(Map.of()));
    }

    private static JsonNode only(List<JsonNode> objects, String kind) {
        List<JsonNode> found = objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
        assertThat(found).as("%s objects", kind).hasSize(1);
        return found.get(0);
    }

    /** The elements of a list by one of their fields, to compare lists whose order does not matter. */
    private static Map<String, JsonNode> byName(JsonNode list, String key) {
        Map<String, JsonNode> map = new TreeMap<>();
        list.forEach(e -> map.put(e.path(key).asText(), e));
        return map;
    }
}
