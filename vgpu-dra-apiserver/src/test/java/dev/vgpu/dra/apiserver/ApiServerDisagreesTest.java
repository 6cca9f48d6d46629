package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceFacts;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.dra.DraObserver;
import dev.vgpu.dra.DriverName;
import dev.vgpu.testsupport.CapturedStderr;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An API server that stores less than it was sent, or refuses what it was sent (docs/DRA.md, "When the API server
 * disagrees"): a server without {@code DRADeviceTaints} (Kubernetes 1.34/1.35 by default) drops device taints from
 * every slice; one that refuses a slice answers 422 with its reasons. The publisher says so once, does not send the
 * same slice again and again, and tells its observer of every rejection with its status code.
 */
class ApiServerDisagreesTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SLICES = "/apis/resource.k8s.io/v1/resourceslices";
    private static final String NODE = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\","
            + "\"uid\":\"n-1\"}}";
    private static final ObjectMapper JSON = new ObjectMapper();

    ScriptedApiServer server;
    KubernetesClient client;
    private final List<AutoCloseable> closing = new ArrayList<>();
    /** The slices the server stores, by name. */
    private final Map<String, ObjectNode> stored = new ConcurrentHashMap<>();
    private final AtomicInteger made = new AtomicInteger();
    /** The HTTP codes the publisher's observer was told of. */
    private final List<Integer> rejections = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new ScriptedApiServer();
        client = server.client();
        aServerWithoutDeviceTaints();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        client.close();
        server.close();
    }

    /** A node whose API server stores slices as a 1.34 server without DRADeviceTaints does: taints dropped. */
    private void aServerWithoutDeviceTaints() {
        server.on(r -> r.method().equals("GET") && r.path().equals("/api/v1/nodes/node-a"),
                (r, out) -> ScriptedApiServer.json(out, 200, NODE));
        server.on(r -> r.method().equals("GET") && r.path().equals(SLICES) && !r.watch(), (r, out) -> {
            ObjectNode list = JSON.createObjectNode().put("apiVersion", "resource.k8s.io/v1")
                    .put("kind", "ResourceSliceList");
            list.putObject("metadata").put("resourceVersion", Integer.toString(made.get()));
            ArrayNode items = list.putArray("items");
            stored.values().forEach(items::add);
            ScriptedApiServer.json(out, 200, JSON.writeValueAsString(list));
        });
        server.on(r -> (r.method().equals("POST") && r.path().equals(SLICES))
                || (r.method().equals("PUT") && r.path().startsWith(SLICES + "/")), (r, out) -> {
            ObjectNode slice = (ObjectNode) JSON.readTree(r.body());
            ObjectNode meta = (ObjectNode) slice.get("metadata");
            if (r.method().equals("POST")) {
                meta.put("name", "node-a-gpu.vgpu.dev-" + made.incrementAndGet());
            }
            meta.put("resourceVersion", Integer.toString(made.incrementAndGet()));
            for (JsonNode device : slice.path("spec").path("devices")) {
                ((ObjectNode) device).remove("taints"); // dropDisabledDRADeviceTaintsFields
            }
            stored.put(meta.get("name").asText(), slice);
            ScriptedApiServer.json(out, r.method().equals("POST") ? 201 : 200, JSON.writeValueAsString(slice));
        });
    }

    private SlicePublisher publisher() {
        SlicePublisher p = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(Duration.ofMillis(20)).watch(false).observer(new DraObserver() {
                    @Override
                    public void apiRejected(int code) {
                        rejections.add(code);
                    }
                }).start();
        closing.add(p);
        return p;
    }

    private long writes() {
        return server.count(r -> r.method().equals("POST") || r.method().equals("PUT"));
    }

    private long lists() {
        return server.count(r -> r.method().equals("GET") && r.path().equals(SLICES));
    }

    @Test
    void droppedTaintsAreSaidOnceAndTheSameSliceIsNotSentAgain() {
        String log = CapturedStderr.of(() -> {
            SlicePublisher p = publisher();
            p.publish(SlicePublisherTest.unhealthy(SlicePublisherTest.vfs(2), "0000:40:01.0"));
            // Twenty periodic rounds after the first write: before, each one PUT the slice again (and logged it).
            Awaitility.await().atMost(WAIT).until(() -> lists() >= 22);
        });

        assertThat(writes()).as("one POST, no rewrite of what the server stored").isEqualTo(1);
        assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains("dropped"))).singleElement()
                .satisfies(l -> assertThat(l).contains("spec.devices[].taints", "DRADeviceTaints",
                        "health stream"));
        assertThat(log.lines().filter(l -> l.contains("Published"))).hasSize(1);
    }

    @Test
    void aChangedPoolIsSentAgainAndStillNotRepeated() {
        SlicePublisher p = publisher();
        p.publish(SlicePublisherTest.unhealthy(SlicePublisherTest.vfs(2), "0000:40:01.0"));
        Awaitility.await().atMost(WAIT).until(() -> lists() >= 5);
        long before = writes();

        p.publish(SlicePublisherTest.unhealthy(SlicePublisherTest.vfs(3), "0000:40:01.0"));
        Awaitility.await().atMost(WAIT).until(() -> writes() > before);
        long after = writes();
        long listed = lists();
        Awaitility.await().atMost(WAIT).until(() -> lists() >= listed + 10);

        assertThat(writes()).isEqualTo(after);
        assertThat(stored.values()).singleElement().satisfies(s -> assertThat(s.path("spec").path("devices"))
                .hasSize(3));
    }

    @Test
    void aSliceTheServerRefusesIsAWarnWithItsCodeAndMessageAndAMetric() {
        server.on(r -> r.method().equals("POST") && r.path().equals(SLICES), (r, out) -> ScriptedApiServer.json(
                out, 422, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"code\":422,\"reason\":\"Invalid\",\"message\":"
                        + "\"ResourceSlice.resource.k8s.io \\\"\\\" is invalid: spec.devices[0].attributes[profile]"
                        + ".string: Too long: may not be more than 64 bytes\"}"));

        String log = CapturedStderr.of(() -> {
            publisher().publish(SlicePublisherTest.unchecked(SlicePublisherTest.vfs(1)));
            Awaitility.await().atMost(WAIT).until(() -> !rejections.isEmpty());
        });

        assertThat(rejections).first().isEqualTo(422);
        assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains("rejected"))).first()
                .satisfies(l -> assertThat(l).contains("POST of a new ResourceSlice", "HTTP 422",
                        "may not be more than 64 bytes"));
    }

    @Test
    void anAttributeValueOfMoreThan64BytesIsLeftOutWithOneWarnAndTheSliceIsAccepted() {
        String profile = "\u00c9".repeat(40);
        Device device = Device.builder("0000:40:01.0", new ResourceName("WIDE-1Q"), "vendor-vfio",
                Attachment.VFIO_PCI).parent(new PciAddress(0, 0x40, 0, 0)).iommuGroup("100")
                .facts(DeviceFacts.NONE.withProfile(profile)).build();
        Snapshot snapshot = Snapshot.builder().add("vendor-vfio", new Discovery(List.of(device), List.of())).build();

        String log = CapturedStderr.of(() -> {
            publisher().publish(SlicePublisherTest.unchecked(snapshot));
            Awaitility.await().atMost(WAIT).until(() -> lists() >= 10);
        });

        assertThat(stored.values()).singleElement().satisfies(s -> assertThat(s.path("spec").path("devices").get(0)
                .path("attributes").has("profile")).isFalse());
        assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains("attribute profile"))).singleElement()
                .satisfies(l -> assertThat(l).contains("80 bytes"));
        assertThat(rejections).isEmpty();
    }
}
