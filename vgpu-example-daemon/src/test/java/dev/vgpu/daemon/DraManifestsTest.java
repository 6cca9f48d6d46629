package dev.vgpu.daemon;

import static dev.vgpu.daemon.DeployManifestsTest.container;
import static dev.vgpu.daemon.DeployManifestsTest.env;
import static dev.vgpu.daemon.DeployManifestsTest.flag;
import static dev.vgpu.daemon.DeployManifestsTest.hostPathOf;
import static dev.vgpu.daemon.DeployManifestsTest.mountAt;
import static dev.vgpu.daemon.DeployManifestsTest.strings;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.daemon.serve.ServeCommand;
import dev.vgpu.daemon.serve.ServeOptions;
import dev.vgpu.dra.DeviceAttribute;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.ResourceSlices;
import dev.vgpu.dra.SliceDevice;
import dev.vgpu.dra.SliceSpec;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SysfsTree;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code deploy/overlays/dra} and its {@code examples/}, rendered with {@code kubectl kustomize} as a user would: the
 * DaemonSet in DRA mode with the contract's flags, its mounts, env and RBAC; the DeviceClass; the claim templates'
 * CEL, checked against the ResourceSlices {@code vgpu-dra} publishes for a sample host; the VMIs' claim references.
 * Runs on the test thread only.
 */
class DraManifestsTest {

    /** The attributes the driver publishes (docs/DRA.md §4), qualified ones with their domain. */
    static final Set<String> CONTRACT_ATTRIBUTES = Set.of("type", "resourceName", "profile", "deviceId", "iommuGroup",
            "numaNode", "parentPciBusID", "vgpuTypeId", "mdevUUID", "resource.kubernetes.io/pciBusID",
            "resource.kubernetes.io/pcieRoot");
    static final String T4_1Q = "aa618089-8b16-4d01-a136-25a0f3c73123";
    static final String T4_2Q = "bb618089-8b16-4d01-a136-25a0f3c73124";
    /** vGPU type ids of the sample's L40S catalog (the fixture's own numbering). */
    static final Map<Long, String> L40S = Map.of(1155L, "NVIDIA L40S-4Q", 1157L, "NVIDIA L40S-8Q");

    static List<JsonNode> overlay;
    static List<JsonNode> examples;
    static JsonNode defaultDaemonSet;
    /** Every device of the sample host's pool, as vgpu-dra publishes it. */
    static List<SliceDevice> pool;
    static String secondCardVf;

    @BeforeAll
    static void render(@TempDir Path tmp) throws Exception {
        Path deploy = Path.of("").toAbsolutePath().getParent().resolve("deploy");
        overlay = DeployManifestsTest.kustomize(deploy.resolve("overlays/dra"), tmp);
        examples = DeployManifestsTest.kustomize(deploy.resolve("overlays/dra/examples"), tmp);
        List<JsonNode> plain = DeployManifestsTest.kustomize(deploy.resolve("overlays/default"), tmp);
        defaultDaemonSet = plain.stream().filter(o -> o.path("kind").asText().equals("DaemonSet")).findFirst()
                .orElseThrow();
        pool = samplePool(tmp.resolve("host"));
    }

    /**
     * A node with two H200s (SXM under root pci0000:40 on NUMA 0, NVL on NUMA 1 in a sysfs path that names no PCIe
     * root), two L40S cards (three VF vGPUs: an 8Q and a 4Q on NUMA 0, an 8Q whose NUMA node sysfs does not know)
     * and a T4 with a 1Q and a 2Q mdev. The unknowns make a selector that reads numaNode or pcieRoot without has()
     * fail here.
     */
    static List<SliceDevice> samplePool(Path root) throws Exception {
        SysfsTree host = SysfsTree.at(root);
        host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
        host.passthroughGpu("0000:c1:00.0", 0x233b).iommuGroup(90).numa(1).under("platform/vbus").create();
        host.sriovCard("0000:1b:00.0", 0x26b9).numa(0).virtualFunctions(2, 100).catalog(L40S).create();
        host.configureVf("0000:1b:00.4", 1157).configureVf("0000:1b:00.5", 1155);
        host.sriovCard("0000:9b:00.0", 0x26b9).virtualFunctions(1, 110).catalog(L40S).create();
        secondCardVf = SysfsTree.vfAddress("0000:9b:00.0", 0);
        host.configureVf(secondCardVf, 1157);
        host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        host.mdev(T4_1Q, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        host.mdev(T4_2Q, "0000:06:00.0", "nvidia-223", "GRID T4-2Q", 8);
        Host scan = host.host().forScan();
        Snapshot.Builder snapshot = Snapshot.builder();
        for (DeviceSource source : List.<DeviceSource>of(new PassthroughSource(), new MdevSource(),
                new VendorVfioSource())) {
            snapshot.add(source.name(), source.discover(scan));
        }
        List<SliceDevice> devices = new ArrayList<>();
        for (SliceSpec slice : ResourceSlices.of(DriverName.DEFAULT, "node-a", snapshot.build(), 1)) {
            devices.addAll(slice.devices());
        }
        assertThat(devices).as("the sample pool").hasSize(7);
        return devices;
    }

    static List<JsonNode> ofKind(List<JsonNode> objects, String kind) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    }

    static JsonNode only(List<JsonNode> objects, String apiVersion, String kind) {
        List<JsonNode> found = ofKind(objects, kind);
        assertThat(found).as("%s objects", kind).hasSize(1);
        assertThat(found.get(0).path("apiVersion").asText()).isEqualTo(apiVersion);
        return found.get(0);
    }

    static JsonNode daemonSet() {
        return only(overlay, "apps/v1", "DaemonSet");
    }

    static String driver() {
        return flag(container(daemonSet()), "--dra-driver");
    }

    @Test
    void theOverlayRendersTheDaemonSetItsRbacAndTheDeviceClassAndNoExample() {
        assertThat(overlay).extracting(o -> o.path("kind").asText()).containsExactlyInAnyOrder("DaemonSet",
                "NetworkPolicy", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DeviceClass");
        assertThat(examples).extracting(o -> o.path("kind").asText()).containsExactlyInAnyOrder(
                "ResourceClaimTemplate", "ResourceClaimTemplate", "ResourceClaimTemplate", "ResourceClaimTemplate",
                "ResourceClaimTemplate", "VirtualMachineInstance", "VirtualMachineInstance");
        examples.forEach(o -> assertThat(o.at("/metadata/namespace").isMissingNode())
                .as("%s carries no namespace (kubectl apply -n)", o.at("/metadata/name")).isTrue());
    }

    /** It replaces the default DaemonSet on the same nodes, so a node never runs both modes. */
    @Test
    void theDaemonSetIsTheDefaultOneOnTheSameNodesInDraModeWithTheContractsFlags() {
        JsonNode ds = daemonSet();
        for (String field : List.of("/metadata/name", "/metadata/namespace", "/spec/selector",
                "/spec/template/spec/affinity", "/spec/template/spec/tolerations")) {
            assertThat(ds.at(field)).as(field).isEqualTo(defaultDaemonSet.at(field));
        }
        JsonNode c = container(ds);
        JsonNode plain = container(defaultDaemonSet);
        for (String field : List.of("image", "securityContext", "ports", "livenessProbe", "readinessProbe")) {
            assertThat(c.path(field)).as(field).isEqualTo(plain.path(field));
        }
        // The same resources but a larger memory request (the API-server client loads in this mode only).
        assertThat(c.at("/resources/limits")).isEqualTo(plain.at("/resources/limits"));
        assertThat(c.at("/resources/requests/cpu")).isEqualTo(plain.at("/resources/requests/cpu"));
        assertThat(c.at("/resources/requests/memory").asText()).isEqualTo("160Mi");
        List<String> args = strings(c.path("args"));
        assertThat(args.get(0)).isEqualTo("serve");
        assertThat(flag(c, "--mode")).isEqualTo("dra");
        assertThat(driver()).isEqualTo(DriverName.DEFAULT.value());
        assertThat(flag(c, "--kubelet-root")).isEqualTo("/var/lib/kubelet");
        assertThat(flag(c, "--cdi-dir")).isEqualTo("/var/run/cdi");
        assertThat(flag(c, "--state-dir")).isEqualTo("/var/lib/vgpu");
        assertThat(flag(c, "--host-root")).isEqualTo("/host");
        assertThat(flag(c, "--metrics-address")).isEqualTo(ServeOptions.DEFAULT_METRICS_ADDRESS);
        assertThat(args).contains("--no-nvml").noneMatch(a -> a.startsWith("--device-plugin-dir"));
        // The default's environment (the JVM's flags and the rest), plus the node's name.
        java.util.Set<String> expected = new java.util.HashSet<>(env(plain).keySet());
        expected.add("NODE_NAME");
        assertThat(env(c).keySet()).containsExactlyInAnyOrderElementsOf(expected);
        env(plain).forEach((name, value) -> assertThat(env(c)).as(name).containsEntry(name, value));
    }

    @Test
    void theNodeNameComesFromTheDownwardApi() {
        List<JsonNode> nodeName = new ArrayList<>();
        container(daemonSet()).path("env").forEach(e -> {
            if (e.path("name").asText().equals("NODE_NAME")) {
                nodeName.add(e);
            }
        });
        assertThat(nodeName).hasSize(1);
        assertThat(nodeName.get(0).has("value")).isFalse();
        assertThat(nodeName.get(0).path("valueFrom").toString())
                .isEqualTo("{\"fieldRef\":{\"fieldPath\":\"spec.nodeName\"}}");
    }

    /**
     * The registration socket's directory, the driver's plugin directory (DRA socket, metadata files) and the CDI
     * directory are writable hostPaths mounted at their host paths: the kubelet dials the path GetInfo answers, and
     * the CDI specs name the metadata files by host path. Both socket paths fit a unix socket address.
     */
    @Test
    void theKubeletPluginDirectoriesAndTheCdiDirectoryAreMountedAtTheirHostPaths() {
        JsonNode ds = daemonSet();
        JsonNode c = container(ds);
        Path kubeletRoot = Path.of(flag(c, "--kubelet-root"));
        Path registration = kubeletRoot.resolve("plugins_registry").resolve(driver() + "-reg.sock");
        Path draSocket = kubeletRoot.resolve("plugins").resolve(driver()).resolve("dra.sock");
        for (Path dir : List.of(registration.getParent(), draSocket.getParent(), Path.of(flag(c, "--cdi-dir")))) {
            JsonNode mount = mountAt(c, dir.toString());
            assertThat(mount.path("readOnly").asBoolean()).as("%s is written", dir).isFalse();
            assertThat(hostPathOf(ds, mount).path("path").asText()).as("host path of %s", dir)
                    .isEqualTo(dir.toString());
        }
        assertThat(hostPathOf(ds, mountAt(c, registration.getParent().toString())).path("type").asText())
                .as("the kubelet makes plugins_registry").isEqualTo("Directory");
        for (Path socket : List.of(registration, draSocket)) {
            assertThat(socket.toString().getBytes(StandardCharsets.UTF_8).length).as("%s", socket)
                    .isLessThanOrEqualTo(107);
        }
        // Narrow: not the whole plugins directory (other drivers' and CSI plugins' sockets live there).
        c.path("volumeMounts").forEach(m -> assertThat(m.path("mountPath").asText())
                .isNotEqualTo(kubeletRoot.resolve("plugins").toString()).isNotEqualTo(kubeletRoot.toString()));
        // The device-plugin directory serves nothing in DRA mode.
        c.path("volumeMounts").forEach(m -> assertThat(m.path("mountPath").asText()).doesNotContain("device-plugins"));
        ds.at("/spec/template/spec/volumes").forEach(v -> assertThat(v.at("/hostPath/path").asText())
                .doesNotContain("device-plugins"));
        // What stays from the base: the host's /dev and /sys read-only (the re-checks), the state directory written.
        assertThat(mountAt(c, "/host/dev").path("readOnly").asBoolean()).isTrue();
        assertThat(mountAt(c, "/host/sys").path("readOnly").asBoolean()).isTrue();
        assertThat(hostPathOf(ds, mountAt(c, flag(c, "--state-dir"))).path("path").asText()).isEqualTo("/var/lib/vgpu");
        Set<String> volumes = new HashSet<>();
        ds.at("/spec/template/spec/volumes").forEach(v -> volumes.add(v.path("name").asText()));
        c.path("volumeMounts").forEach(m -> assertThat(volumes).contains(m.path("name").asText()));
        assertThat(volumes).hasSameSizeAs(strings(c.path("volumeMounts")));
    }

    /** Exactly what the driver uses of docs/DRA.md §3's rules, bound to the pod's ServiceAccount. */
    @Test
    void theServiceAccountHasExactlyTheDriversRbac() {
        JsonNode pod = daemonSet().at("/spec/template/spec");
        JsonNode account = only(overlay, "v1", "ServiceAccount");
        assertThat(pod.path("serviceAccountName").asText()).isEqualTo(account.at("/metadata/name").asText());
        assertThat(account.at("/metadata/namespace").asText()).isEqualTo(daemonSet().at("/metadata/namespace").asText());
        assertThat(pod.path("automountServiceAccountToken").asBoolean()).as("the token reaches the pod").isTrue();

        JsonNode role = only(overlay, "rbac.authorization.k8s.io/v1", "ClusterRole");
        Set<String> granted = new TreeSet<>();
        role.path("rules").forEach(rule -> {
            assertThat(rule.has("nonResourceURLs") || rule.has("resourceNames")).as("rule %s", rule).isFalse();
            for (String group : strings(rule.path("apiGroups"))) {
                for (String resource : strings(rule.path("resources"))) {
                    for (String verb : strings(rule.path("verbs"))) {
                        granted.add(group + " " + resource + " " + verb);
                    }
                }
            }
        });
        assertThat(granted).containsExactlyInAnyOrder(
                "resource.k8s.io resourceclaims get",
                " nodes get",
                "resource.k8s.io resourceslices get", "resource.k8s.io resourceslices list",
                "resource.k8s.io resourceslices watch", "resource.k8s.io resourceslices create",
                "resource.k8s.io resourceslices update", "resource.k8s.io resourceslices patch",
                "resource.k8s.io resourceslices delete");

        JsonNode binding = only(overlay, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding");
        assertThat(binding.path("roleRef").toString()).isEqualTo("{\"apiGroup\":\"rbac.authorization.k8s.io\","
                + "\"kind\":\"ClusterRole\",\"name\":\"" + role.at("/metadata/name").asText() + "\"}");
        assertThat(binding.path("subjects")).hasSize(1);
        assertThat(binding.path("subjects").get(0).toString()).isEqualTo("{\"kind\":\"ServiceAccount\",\"name\":\""
                + account.at("/metadata/name").asText() + "\",\"namespace\":\""
                + account.at("/metadata/namespace").asText() + "\"}");
        // The base's NetworkPolicy limits ingress only: the API server stays reachable.
        assertThat(strings(only(overlay, "networking.k8s.io/v1", "NetworkPolicy").at("/spec/policyTypes")))
                .containsExactly("Ingress");
    }

    @Test
    void theDeviceClassSelectsEveryDeviceOfThisDriverAndNoOther() {
        JsonNode deviceClass = only(overlay, "resource.k8s.io/v1", "DeviceClass");
        JsonNode selectors = deviceClass.at("/spec/selectors");
        assertThat(selectors).hasSize(1);
        String expression = selectors.get(0).at("/cel/expression").asText();
        assertThat(pool).allMatch(d -> CelSubset.matches(expression, d, driver()));
        assertThat(pool).noneMatch(d -> CelSubset.matches(expression, d, "other.example.com"));
    }

    static Map<String, JsonNode> templates() {
        Map<String, JsonNode> byName = new java.util.TreeMap<>();
        ofKind(examples, "ResourceClaimTemplate").forEach(t -> {
            assertThat(t.path("apiVersion").asText()).isEqualTo("resource.k8s.io/v1");
            byName.put(t.at("/metadata/name").asText(), t);
        });
        return byName;
    }

    /** One request each, one device of the DeviceClass, picked by CEL alone. */
    @Test
    void everyClaimTemplateAsksForOneDeviceOfTheDeviceClass() {
        String deviceClass = only(overlay, "resource.k8s.io/v1", "DeviceClass").at("/metadata/name").asText();
        templates().forEach((name, template) -> {
            JsonNode requests = template.at("/spec/spec/devices/requests");
            assertThat(requests).as(name).hasSize(1);
            JsonNode exactly = requests.get(0).path("exactly");
            assertThat(requests.get(0).path("name").asText()).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
            assertThat(exactly.path("deviceClassName").asText()).as(name).isEqualTo(deviceClass);
            assertThat(exactly.path("count").asInt()).as(name).isEqualTo(1);
            assertThat(exactly.path("selectors")).as(name).hasSize(1);
            assertThat(exactly.at("/selectors/0/cel/expression").asText()).as(name).isNotBlank();
        });
    }

    /**
     * Every attribute the CEL names is one the contract lists and one vgpu-dra put on a device of the sample pool:
     * a misspelt name would not match, it would fail the allocation.
     */
    @Test
    void theCelExpressionsNameOnlyAttributesTheDriverPublishes() {
        Set<String> published = new TreeSet<>();
        pool.forEach(d -> published.addAll(d.attributes().keySet()));
        assertThat(CONTRACT_ATTRIBUTES).containsAll(published);
        Set<String> named = new TreeSet<>();
        templates().forEach((name, t) -> named.addAll(CelSubset.attributes(
                t.at("/spec/spec/devices/requests/0/exactly/selectors/0/cel/expression").asText(), driver())));
        assertThat(named).contains("type", "profile", "deviceId", "numaNode", "resource.kubernetes.io/pcieRoot");
        assertThat(published).containsAll(named);
    }

    /** What each example selects in the sample pool, evaluated as the scheduler would for this subset of CEL. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "vgpu-l40s-8q       | pci-0000-1b-00-4 pci-SECOND",
        "vgpu-l40s-8q-numa0 | pci-0000-1b-00-4",
        "mdev-grid-t4-1q    | mdev-" + T4_1Q,
        "gpu-h200           | pci-0000-41-00-0 pci-0000-c1-00-0",
        "gpu-h200-pcie-root | pci-0000-41-00-0",
    })
    void eachClaimTemplateSelectsTheDevicesItDescribesInASamplePool(String template, String expected) {
        String secondVf = "pci-" + secondCardVf.replace(':', '-').replace('.', '-');
        String expression = templates().get(template)
                .at("/spec/spec/devices/requests/0/exactly/selectors/0/cel/expression").asText();
        List<String> selected = pool.stream().filter(d -> CelSubset.matches(expression, d, driver()))
                .map(SliceDevice::name).sorted().toList();
        assertThat(selected).as(expression)
                .isEqualTo(List.of(expected.replace("pci-SECOND", secondVf).split(" ")).stream().sorted().toList());
    }

    /**
     * Each VMI takes its devices the way KubeVirt 1.9 reads them: {@code spec.resourceClaims[]} entries with unique
     * names and exactly one of a claim or a template (here templates that exist), and GPUs or host devices that name
     * one of those claims and one of its template's requests, without a device-plugin {@code deviceName}.
     */
    @Test
    void theVmisTakeTheirDevicesFromClaimTemplatesThatExist() {
        Map<String, JsonNode> templates = templates();
        Set<String> kinds = new TreeSet<>();
        for (JsonNode vmi : ofKind(examples, "VirtualMachineInstance")) {
            assertThat(vmi.path("apiVersion").asText()).isEqualTo("kubevirt.io/v1");
            Map<String, String> claims = new java.util.TreeMap<>();
            vmi.at("/spec/resourceClaims").forEach(claim -> {
                assertThat(claim.has("resourceClaimName")).as("%s", claim).isFalse();
                String template = claim.path("resourceClaimTemplateName").asText();
                assertThat(templates).as("templates").containsKey(template);
                assertThat(claims.put(claim.path("name").asText(), template)).as("unique claim names").isNull();
            });
            assertThat(claims).isNotEmpty();
            for (String kind : List.of("gpus", "hostDevices")) {
                vmi.at("/spec/domain/devices/" + kind).forEach(device -> {
                    kinds.add(kind);
                    assertThat(device.has("deviceName")).as("%s", device).isFalse();
                    String template = claims.get(device.path("claimName").asText());
                    assertThat(template).as("the claim %s of %s", device.path("claimName"), device).isNotNull();
                    List<String> requests = new ArrayList<>();
                    templates.get(template).at("/spec/spec/devices/requests")
                            .forEach(r -> requests.add(r.path("name").asText()));
                    assertThat(requests).as("requests of %s", template).contains(device.path("requestName").asText());
                });
            }
        }
        assertThat(kinds).containsExactly("gpus", "hostDevices");
    }

    /**
     * The CEL the examples use, and no more: terms joined by {@code &&}, each {@code device.driver == "..."},
     * {@code has(A)}, {@code A == "..."}, {@code A == 0} or {@code A in ["...", ...]}, where {@code A} is
     * {@code device.attributes["<domain>"].<name>}. Terms are read left to right; reading an attribute the device
     * lacks, or comparing values of different types, is an error here as in CEL (it would fail the allocation), and
     * anything else fails the test as outside the subset.
     */
    static final class CelSubset {
        static final String ATTRIBUTE = "device\\.attributes\\[\"([a-z0-9.-]+)\"\\]\\.([A-Za-z_][A-Za-z0-9_]*)";
        static final Pattern REFERENCE = Pattern.compile(ATTRIBUTE);
        static final Pattern DRIVER = Pattern.compile("device\\.driver == \"([^\"]*)\"");
        static final Pattern HAS = Pattern.compile("has\\(" + ATTRIBUTE + "\\)");
        static final Pattern EQUALS = Pattern.compile(ATTRIBUTE + " == (\"[^\"]*\"|-?[0-9]+)");
        static final Pattern IN = Pattern.compile(ATTRIBUTE + " in \\[(\"[^\"]*\"(?:, \"[^\"]*\")*)\\]");

        private CelSubset() {
        }

        /** The attribute names an expression reads, qualified as a slice's attribute keys are. */
        static Set<String> attributes(String expression, String driver) {
            Set<String> names = new TreeSet<>();
            Matcher m = REFERENCE.matcher(expression);
            while (m.find()) {
                names.add(key(m.group(1), m.group(2), driver));
            }
            return names;
        }

        static String key(String domain, String name, String driver) {
            return domain.equals(driver) ? name : domain + "/" + name;
        }

        static boolean matches(String expression, SliceDevice device, String driver) {
            for (String term : expression.strip().split("\\s*&&\\s*")) {
                if (!term(term.strip(), device, driver)) {
                    return false;
                }
            }
            return true;
        }

        private static boolean term(String term, SliceDevice device, String driver) {
            Matcher m;
            if ((m = DRIVER.matcher(term)).matches()) {
                return m.group(1).equals(driver);
            }
            if ((m = HAS.matcher(term)).matches()) {
                return device.attributes().containsKey(key(m.group(1), m.group(2), driver));
            }
            if ((m = EQUALS.matcher(term)).matches()) {
                Object value = value(m, device, driver);
                Object literal = literal(m.group(3));
                assertThat(value.getClass()).as("types compared in %s (an error in CEL)", term)
                        .isEqualTo(literal.getClass());
                return value.equals(literal);
            }
            if ((m = IN.matcher(term)).matches()) {
                Object value = value(m, device, driver);
                List<Object> list = new ArrayList<>();
                for (String item : m.group(3).split(", ")) {
                    list.add(literal(item));
                }
                list.forEach(item -> assertThat(item).as("'in' over strings only").isInstanceOf(String.class));
                assertThat(value).as("%s against strings", term).isInstanceOf(String.class);
                return list.contains(value);
            }
            throw new AssertionError("outside the CEL this test evaluates: " + term);
        }

        private static Object value(Matcher m, SliceDevice device, String driver) {
            String key = key(m.group(1), m.group(2), driver);
            DeviceAttribute attribute = device.attributes().get(key);
            if (attribute == null) {
                throw new AssertionError("reads " + key + ", which device " + device.name() + " lacks: an error in"
                        + " CEL; guard it with has(...)");
            }
            if (attribute instanceof DeviceAttribute.StringValue s) {
                return s.value();
            }
            if (attribute instanceof DeviceAttribute.IntValue i) {
                return i.value();
            }
            throw new AssertionError("the examples compare strings and ints only: " + key);
        }

        private static Object literal(String text) {
            return text.startsWith("\"") ? text.substring(1, text.length() - 1) : (Object) Long.parseLong(text);
        }
    }
}
