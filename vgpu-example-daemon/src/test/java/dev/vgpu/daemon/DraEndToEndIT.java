package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.dra.CdiRuntime;
import dev.vgpu.dra.KubeVirtMetadataReader.VmiClaim;
import dev.vgpu.dra.KubeVirtMetadataReader;
import dev.vgpu.dra.TestKubelet;
import dev.vgpu.dra.grpc.health.v1.DeviceHealth;
import dev.vgpu.dra.grpc.health.v1.HealthStatus;
import dev.vgpu.dra.grpc.health.v1.NodeWatchResourcesResponse;
import dev.vgpu.dra.grpc.registration.PluginInfo;
import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.NodePrepareResourceResponse;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesResponse;
import dev.vgpu.testing.SysfsTree;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --mode dra} through the packaged jar (docs/DRA.md, "Running it"): a host with a VF vGPU, an mdev and a
 * passthrough GPU; vgpu-dra's test kubelet on the daemon's real unix sockets; fabric8's mock API server in CRUD mode,
 * which the daemon reaches through a kubeconfig this test writes; the compiled NVML stub, whose XID file the test
 * appends to. Each device goes from its slice to a prepared claim whose metadata KubeVirt's reader rules accept, and
 * back; an XID taints the GPU's slice entry. Every wait is for a state, with a generous deadline.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class DraEndToEndIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String NODE = "node-a";
    private static final String DRIVER = "gpu.vgpu.dev";
    private static final String UUID = "aa618089-8b16-4d01-a136-25a0f3c73123";
    /** The NVML stub's card 0 (its bus id 00000000:41:00.0): the passthrough GPU. */
    private static final String GPU = "pci-0000-41-00-0";
    private static final String VF = "pci-0000-1b-00-4";
    private static final String MDEV = "mdev-" + UUID;
    private static final Pattern PORT = Pattern.compile("metrics and probes on http://[^:]+:(\\d+)/metrics");

    KubernetesMockServer server;
    KubernetesClient client;
    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void threeKindsOfDeviceGoFromSliceToAPreparedClaimKubeVirtAcceptsAndBackAndAnXidTaintsTheGpu() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree host = SysfsTree.at(root);
        host.passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).numa(0).create();
        host.sriovCard("0000:1b:00.0", 0x26b9).numa(0).virtualFunctions(1, 100)
                .catalog(Map.of(1152L, "NVIDIA L40S-1Q")).create();
        host.configureVf("0000:1b:00.4", 1152);
        host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        host.mdev(UUID, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        host.addGroupNode(41).addGroupNode(100).addGroupNode(7);
        Path kubelet = Files.createDirectories(tmp.resolve("kubelet"));
        Path cdi = tmp.resolve("cdi");
        Path events = Files.writeString(tmp.resolve("xid-events"), "");
        Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: mock, cluster: {server: "http://%s:%d"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: mock, context: {cluster: mock, user: u, namespace: default}}]
                current-context: mock
                """.formatted(server.getHostName(), server.getPort()));
        client.resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        Path stub = Path.of(System.getProperty("vgpu.nvml.stub"));

        try (TestKubelet kubeletSide = new TestKubelet();
             // On the image's JVM with the manifest's flags (its heap, -Xmx48m): what the DRA pod really runs.
             DaemonProcess daemon = DaemonProcess.startAsManifest(Map.of("VGPU_NVML_STUB_EVENTS", events.toString()),
                     tmp.resolve("daemon.log"), "serve", "--mode", "dra",
                     "--host-root", root.toString(), "--kubelet-root", kubelet.toString(), "--cdi-dir",
                     cdi.toString(), "--state-dir", tmp.resolve("state").toString(), "--node-name", NODE,
                     "--kubeconfig", kubeconfig.toString(), "--nvml-library", stub.toString(), "--pci-ids",
                     Files.writeString(tmp.resolve("pci.ids"), "").toString(), "--metrics-address", "127.0.0.1:0")) {
            // Registration as the kubelet's plugin watcher does it.
            Path registration = kubelet.resolve("plugins_registry/" + DRIVER + "-reg.sock");
            await(daemon, () -> Files.exists(registration));
            PluginInfo info = kubeletSide.getInfo(registration);
            Path endpoint = kubelet.resolve("plugins/" + DRIVER + "/dra.sock");
            assertThat(info.getType()).isEqualTo("DRAPlugin");
            assertThat(info.getName()).isEqualTo(DRIVER);
            assertThat(info.getEndpoint()).isEqualTo(endpoint.toString());
            assertThat(info.getSupportedVersionsList()).containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin",
                    "v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth");
            int port = Awaitility.await().atMost(WAIT).until(() -> port(daemon), p -> p > 0);
            assertThat(get(port, "/readyz").body()).contains("has not registered the DRA plugin yet");
            kubeletSide.notify(registration, true, "");
            // The kubelet's health stream (with its ResourceHealthStatus feature): the full list every time.
            TestKubelet.HealthWatch<NodeWatchResourcesResponse> health = kubeletSide.watchHealth(endpoint);

            // The slice: the contract's attributes for each kind.
            await(daemon, () -> devices().keySet().equals(java.util.Set.of(GPU, VF, MDEV)));
            ResourceSlice slice = client.resources(ResourceSlice.class).list().getItems().get(0);
            assertThat(slice.getSpec().getNodeName()).isEqualTo(NODE);
            assertThat(slice.getSpec().getPool().getName()).isEqualTo(NODE);
            assertThat(slice.getMetadata().getOwnerReferences()).singleElement()
                    .satisfies(o -> assertThat(o.getKind()).isEqualTo("Node"));
            Map<String, Map<String, DeviceAttribute>> devices = devices();
            assertThat(strings(devices.get(GPU))).containsEntry("type", "passthrough")
                    .containsEntry("resourceName", "nvidia.com/2331").containsEntry("deviceId", "2331")
                    .containsEntry("resource.kubernetes.io/pciBusID", "0000:41:00.0")
                    .doesNotContainKeys("mdevUUID", "parentPciBusID");
            assertThat(devices.get(GPU).get("iommuGroup").getInt()).isEqualTo(41L);
            assertThat(devices.get(GPU).get("numaNode").getInt()).isZero();
            assertThat(strings(devices.get(VF))).containsEntry("type", "vgpu")
                    .containsEntry("resourceName", "nvidia.com/NVIDIA_L40S-1Q")
                    .containsEntry("profile", "NVIDIA L40S-1Q").containsEntry("parentPciBusID", "0000:1b:00.0")
                    .containsEntry("resource.kubernetes.io/pciBusID", "0000:1b:00.4").doesNotContainKey("mdevUUID");
            assertThat(devices.get(VF).get("vgpuTypeId").getInt()).isEqualTo(1152L);
            assertThat(strings(devices.get(MDEV))).containsEntry("type", "mdev").containsEntry("mdevUUID", UUID)
                    .containsEntry("resourceName", "nvidia.com/GRID_T4-1Q").containsEntry("profile", "GRID T4-1Q")
                    .containsEntry("parentPciBusID", "0000:06:00.0")
                    .doesNotContainKeys("resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot");
            Awaitility.await().atMost(WAIT).until(() -> get(port, "/readyz").statusCode() == 200);

            // Three claims, allocated by "the scheduler", prepared by the kubelet, read as KubeVirt reads them.
            Claim vf = claim("vf", Map.of(), VF);
            Claim mdev = claim("vm-a-gpu-x7k2p", Map.of("resource.kubernetes.io/pod-claim-name", "gpu0"), MDEV);
            Claim gpu = claim("h200", Map.of(), GPU);
            NodePrepareResourcesResponse prepared = kubeletSide.prepare(endpoint, vf, mdev, gpu);
            Path container = tmp.resolve("container");
            for (Claim c : List.of(vf, mdev, gpu)) {
                NodePrepareResourceResponse answer = prepared.getClaimsOrThrow(c.getUid());
                assertThat(answer.getError()).as(c.getName()).isEmpty();
                List<String> ids = answer.getDevicesList().stream().flatMap(d -> d.getCdiDeviceIdsList().stream())
                        .toList();
                CdiRuntime.mount(CdiRuntime.inject(cdi, ids), container);
            }
            assertThat(KubeVirtMetadataReader.read(container, List.of(VmiClaim.named("vgpu", "vf")), "vgpu", "gpu"))
                    .isEqualTo(new KubeVirtMetadataReader.Pci("0000:1b:00.4"));
            assertThat(KubeVirtMetadataReader.read(container, List.of(VmiClaim.fromTemplate("gpu0", "t")), "gpu0",
                    "gpu")).isEqualTo(new KubeVirtMetadataReader.Mdev(UUID));
            assertThat(KubeVirtMetadataReader.read(container, List.of(VmiClaim.named("pgpu", "h200")), "pgpu",
                    "gpu")).isEqualTo(new KubeVirtMetadataReader.Pci("0000:41:00.0"));
            String metrics = get(port, "/metrics").body();
            assertThat(metrics).contains("vgpu_dra_prepared_claims 3.0",
                    "vgpu_dra_prepare_requests_total{result=\"ok\"} 3.0", "vgpu_dra_registered 1.0",
                    "vgpu_devices{health=\"healthy\",resource=\"nvidia.com/2331\"} 1.0");
            assertThat(metrics).containsPattern("vgpu_dra_slices_published_total [1-9]");

            // Unprepare removes what Prepare wrote (which is there now).
            assertThat(files(cdi)).isNotEmpty();
            assertThat(files(kubelet.resolve("plugins/" + DRIVER + "/dra-device-metadata"))).isNotEmpty();
            assertThat(kubeletSide.unprepare(endpoint, vf, mdev, gpu).getClaimsMap().values())
                    .allSatisfy(e -> assertThat(e.getError()).isEmpty()).hasSize(3);
            assertThat(files(cdi)).isEmpty();
            assertThat(files(kubelet.resolve("plugins/" + DRIVER + "/dra-device-metadata"))).isEmpty();
            assertThat(get(port, "/metrics").body()).contains("vgpu_dra_prepared_claims 0.0",
                    "vgpu_dra_unprepare_requests_total{result=\"ok\"} 3.0");

            // A counted XID on the GPU: its entry in the next slice carries the taint; the others do not.
            Files.writeString(events, "0000:41:00.0 79\n", StandardOpenOption.APPEND);
            await(daemon, () -> tainted().equals(List.of(GPU)));
            // The same verdict reaches the kubelet's health stream: the GPU UNHEALTHY, the VF and the mdev HEALTHY.
            java.util.concurrent.atomic.AtomicReference<List<DeviceHealth>> last =
                    new java.util.concurrent.atomic.AtomicReference<>(List.of());
            Awaitility.await().atMost(WAIT).until(() -> {
                last.set(health.next().getDevicesList());
                return last.get().stream().anyMatch(d -> d.getDevice().getDeviceName().equals(GPU)
                        && d.getHealth() == HealthStatus.UNHEALTHY);
            });
            Map<String, HealthStatus> reported = last.get().stream().collect(java.util.stream.Collectors.toMap(
                    d -> d.getDevice().getDeviceName(), DeviceHealth::getHealth));
            assertThat(reported).isEqualTo(Map.of(GPU, HealthStatus.UNHEALTHY, VF, HealthStatus.HEALTHY, MDEV,
                    HealthStatus.HEALTHY));
            // With the reason the daemon's log gives.
            assertThat(last.get()).filteredOn(d -> d.getDevice().getDeviceName().equals(GPU)).singleElement()
                    .extracting(DeviceHealth::getMessage).isEqualTo("its GPU reported a critical XID");
            assertThat(daemon.output()).contains("DRA device 0000:41:00.0 is unhealthy: its GPU reported a critical"
                    + " XID");

            // A figure for the report, not an assertion: the DRA pod's memory after this test's work (docs/BUILD.md).
            System.out.println("DRA mode, manifest's JVM flags: " + memory(daemon.process.pid()));
            daemon.process.destroy();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            assertThat(Files.exists(endpoint)).isFalse();
        }
    }

    /** VmRSS and VmHWM of a process, as {@code /proc/PID/status} says them. */
    private static String memory(long pid) throws java.io.IOException {
        return Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")).stream()
                .filter(l -> l.startsWith("VmRSS:") || l.startsWith("VmHWM:")).map(l -> l.replaceAll("\\s+", " "))
                .collect(java.util.stream.Collectors.joining(", "));
    }

        /** A claim in the API server with one result of this driver for request {@code gpu}, as the scheduler writes. */
    private Claim claim(String name, Map<String, String> annotations, String device) {
        ResourceClaim claim = new ResourceClaim();
        claim.setMetadata(new ObjectMetaBuilder().withNamespace("vms").withName(name).withAnnotations(annotations)
                .build());
        claim.setSpec(new ResourceClaimSpec());
        ResourceClaim created = client.resource(claim).create();
        DeviceRequestAllocationResult result = new DeviceRequestAllocationResult();
        result.setRequest("gpu");
        result.setDriver(DRIVER);
        result.setPool(NODE);
        result.setDevice(device);
        AllocationResult allocation = new AllocationResult();
        allocation.setDevices(new DeviceAllocationResult(List.of(), List.of(result)));
        created.setStatus(new ResourceClaimStatus(allocation, List.of(), List.of()));
        created = client.resource(created).updateStatus();
        return TestKubelet.claim("vms", name, created.getMetadata().getUid());
    }

    /** Every device of this driver's slices for the node, by name. */
    private Map<String, Map<String, DeviceAttribute>> devices() {
        Map<String, Map<String, DeviceAttribute>> out = new TreeMap<>();
        for (ResourceSlice s : client.resources(ResourceSlice.class).list().getItems()) {
            if (DRIVER.equals(s.getSpec().getDriver()) && NODE.equals(s.getSpec().getNodeName())) {
                for (Device d : s.getSpec().getDevices()) {
                    out.put(d.getName(), d.getAttributes());
                }
            }
        }
        return out;
    }

    private List<String> tainted() {
        List<String> out = new ArrayList<>();
        for (ResourceSlice s : client.resources(ResourceSlice.class).list().getItems()) {
            for (Device d : s.getSpec().getDevices()) {
                if (d.getTaints() != null && d.getTaints().stream().anyMatch(t -> (DRIVER + "/unhealthy")
                        .equals(t.getKey()) && "NoSchedule".equals(t.getEffect()))) {
                    out.add(d.getName());
                }
            }
        }
        out.sort(null);
        return out;
    }

    private static Map<String, String> strings(Map<String, DeviceAttribute> attributes) {
        Map<String, String> out = new TreeMap<>();
        attributes.forEach((k, v) -> {
            if (v.getString() != null) {
                out.put(k, v.getString());
            }
        });
        return out;
    }

    private static List<Path> files(Path dir) throws Exception {
        if (!Files.exists(dir)) {
            return List.of();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(Files::isRegularFile).toList();
        }
    }

    private static int port(DaemonProcess daemon) throws Exception {
        Matcher m = PORT.matcher(daemon.output());
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void await(DaemonProcess daemon, java.util.concurrent.Callable<Boolean> condition)
            throws Exception {
        try {
            Awaitility.await().atMost(WAIT).ignoreExceptions().until(condition);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("timed out; the daemon's output:\n" + daemon.output(), e);
        }
    }
}
