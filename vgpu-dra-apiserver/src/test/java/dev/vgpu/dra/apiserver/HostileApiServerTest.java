package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.vgpu.dra.ClaimReader;
import dev.vgpu.dra.ClaimRef;
import dev.vgpu.dra.DevicePool;
import dev.vgpu.dra.DriverName;
import dev.vgpu.testsupport.FakeScheduler;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An API server that misbehaves, as an overloaded or hostile one does (docs/RELIABILITY.md, "DRA mode"): every GET
 * answered 429, connections reset, a server that never answers, watches that end with an error at once, floods of
 * deletion events, a list of 100 MiB, a watch event of 2 MiB. The claim reader answers inside the kubelet's deadline
 * with few requests; the publisher waits between watches, lists once for a flood, and refuses bodies beyond its
 * bounds. Time moves by hand where waits are checked ({@link FakeScheduler#onOneThread()}): no test waits for time.
 */
@Tag("reliability")
class HostileApiServerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SLICES = "/apis/resource.k8s.io/v1/resourceslices";
    private static final String NODE = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\","
            + "\"uid\":\"n-1\"}}";
    private static final String EMPTY_LIST = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSliceList\","
            + "\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}";

    ScriptedApiServer server;
    KubernetesClient client;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new ScriptedApiServer();
        client = server.client();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        client.close();
        server.close();
    }

    private static boolean claimGet(ScriptedApiServer.Request r) {
        return r.method().equals("GET") && r.path().contains("/resourceclaims/");
    }

    private ClaimReader.Answer read(Duration timeLeft) {
        return new ApiClaimReader(ApiServer.of(client), DriverName.DEFAULT).read(new ClaimRef("vms", "gpu", "u-1"),
                timeLeft);
    }

    @Test
    void everyClaimGetAnswered429IsAskedAtMostThreeTimesWithinTheCallsTime() {
        server.on(HostileApiServerTest::claimGet, (r, out) -> ScriptedApiServer.json(out, 429,
                "{\"kind\":\"Status\",\"code\":429,\"message\":\"too many requests\"}"));

        ClaimReader.Answer answer = assertTimeoutPreemptively(WAIT, () -> read(Duration.ofSeconds(20)));

        assertThat(answer).isInstanceOfSatisfying(ClaimReader.Unavailable.class, u -> assertThat(u.reason())
                .isEqualTo("cannot read claim vms/gpu from the API server: HTTP 429"));
        assertThat(server.count(HostileApiServerTest::claimGet)).isEqualTo(ApiClaimReader.ATTEMPTS);
    }

    @Test
    void connectionsThatAreResetAreTriedAtMostThreeTimes() {
        server.on(HostileApiServerTest::claimGet, (r, out) -> {
            throw new java.io.IOException("reset"); // the connection closes without an answer
        });

        ClaimReader.Answer answer = assertTimeoutPreemptively(WAIT, () -> read(Duration.ofSeconds(20)));

        assertThat(answer).isInstanceOf(ClaimReader.Unavailable.class);
        // The JDK's HTTP client sends a GET once more when the connection closed before any answer.
        assertThat(server.count(HostileApiServerTest::claimGet)).isBetween((long) ApiClaimReader.ATTEMPTS,
                2L * ApiClaimReader.ATTEMPTS);
    }

    @Test
    void aServerThatNeverAnswersCostsNoMoreThanTheTimeTheCallHasLeft() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        server.on(HostileApiServerTest::claimGet, (r, out) -> never.await());
        try {
            // Before: fabric8 retried each GET ten times, 10 s each: 129 s a claim on a hung server.
            ClaimReader.Answer answer = assertTimeoutPreemptively(WAIT, () -> read(Duration.ofSeconds(2)));

            assertThat(answer).isInstanceOfSatisfying(ClaimReader.Unavailable.class, u -> assertThat(u.reason())
                    .startsWith("cannot read claim vms/gpu from the API server: no whole answer to GET"));
            assertThat(server.count(HostileApiServerTest::claimGet)).isLessThanOrEqualTo(ApiClaimReader.ATTEMPTS);
        } finally {
            never.countDown();
        }
    }

    /** The node exists, lists come back empty at resourceVersion 5, created slices are echoed with a name. */
    private void aPlainNode() {
        server.on(r -> r.method().equals("GET") && r.path().equals("/api/v1/nodes/node-a"),
                (r, out) -> ScriptedApiServer.json(out, 200, NODE));
        server.on(r -> r.method().equals("GET") && r.path().equals(SLICES) && !r.watch(),
                (r, out) -> ScriptedApiServer.json(out, 200, EMPTY_LIST));
        server.on(r -> r.method().equals("POST") && r.path().equals(SLICES), (r, out) -> ScriptedApiServer.json(out,
                201, r.body().replace("\"generateName\"", "\"name\":\"s-1\",\"generateName\"")));
    }

    private static boolean watch(ScriptedApiServer.Request r) {
        return r.method().equals("GET") && r.watch();
    }

    private static boolean list(ScriptedApiServer.Request r) {
        return r.method().equals("GET") && r.path().equals(SLICES) && !r.watch();
    }

    /** A publisher on a scheduler whose time the test moves, every wait jittered by the factor 0.5 + {@code j}. */
    private SlicePublisher publisher(FakeScheduler time, double j) {
        SlicePublisher p = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(Duration.ofHours(1)).scheduler(time).jitter(() -> j).start();
        closing.add(p);
        closing.add(time::shutdownNow);
        return p;
    }

    @Test
    void watchesAnsweredWithAnError410AreOpenedAgainAfterAJitteredBackoffNotAtOnce() {
        aPlainNode();
        server.on(HostileApiServerTest::watch, (r, out) -> {
            ScriptedApiServer.streamHead(out);
            out.write(("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old"
                    + " resource version\"}}\n").getBytes(StandardCharsets.UTF_8));
        });
        FakeScheduler time = FakeScheduler.onOneThread();
        SlicePublisher p = publisher(time, 0.25); // every wait is 0.75 of its base

        p.publish(new DevicePool(SlicePublisherTest.vfs(2), Optional.empty()));

        // Before: a new list and watch at once after every error, 109-180 requests a second. Now each restart waits
        // 1 s, 2 s, 4 s ... (jittered), up to 60 s, and nothing asks the server meanwhile.
        List<Long> waits = new ArrayList<>();
        for (int restart = 1; restart <= 8; restart++) {
            int watches = restart;
            Awaitility.await().atMost(WAIT).until(() -> server.count(HostileApiServerTest::watch) == watches
                    && time.pending().stream().anyMatch(d -> d.compareTo(Duration.ofMinutes(30)) < 0));
            Duration wait = time.pending().get(0);
            waits.add(wait.toMillis());
            long requests = server.requests().size();
            time.forward(wait.minusMillis(1));
            assertThat(server.requests()).as("nothing before the wait is over").hasSize((int) requests);
            time.forward(Duration.ofMillis(1));
        }
        assertThat(waits).containsExactly(750L, 1_500L, 3_000L, 6_000L, 12_000L, 24_000L, 45_000L, 45_000L);
        // One list before each watch: the new watch starts where that list stands.
        Awaitility.await().atMost(WAIT).until(() -> server.count(HostileApiServerTest::watch) == 9);
        assertThat(server.count(HostileApiServerTest::list)).isEqualTo(9);
        assertThat(server.requests()).filteredOn(HostileApiServerTest::watch)
                .allSatisfy(r -> assertThat(r.target()).contains("resourceVersion=5", "allowWatchBookmarks=true"));
    }

    @Test
    void aFloodOfAHundredThousandDeletionsIsOneList() throws Exception {
        aPlainNode();
        CountDownLatch flooded = new CountDownLatch(1);
        server.on(HostileApiServerTest::watch, (r, out) -> {
            ScriptedApiServer.streamHead(out);
            if (flooded.getCount() == 0) {
                new CountDownLatch(1).await(); // later watches stay open and quiet
            }
            byte[] event = ("{\"type\":\"DELETED\",\"object\":{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
                    + "\"ResourceSlice\",\"metadata\":{\"name\":\"s-1\"}}}\n").getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 100_000; i++) {
                out.write(event);
            }
            out.flush();
            flooded.countDown();
            new CountDownLatch(1).await();
        });
        FakeScheduler time = FakeScheduler.onOneThread();
        SlicePublisher p = publisher(time, 0.5);
        p.publish(new DevicePool(SlicePublisherTest.vfs(2), Optional.empty()));
        Awaitility.await().atMost(Duration.ofMinutes(2)).until(() -> p.eventsRead() == 100_000);
        // The round the flood asked for waits for its spacing; the events behind it asked for nothing more.
        assertThat(time.pending()).filteredOn(d -> d.compareTo(Duration.ofMinutes(30)) < 0)
                .containsExactly(SlicePublisher.EVENT_ROUND_SPACING);

        time.forward(SlicePublisher.EVENT_ROUND_SPACING.multipliedBy(10));

        // Before: one list per event, 100+ queued behind the flood. Now the first round and one for the flood.
        assertThat(server.count(HostileApiServerTest::list)).isEqualTo(2);
        assertThat(server.count(r -> r.method().equals("POST"))).isEqualTo(2);
        // Stopping does not wait for queued rounds.
        assertTimeoutPreemptively(Duration.ofSeconds(10), p::close);
    }

    @Test
    void aListOfAHundredMebibytesIsRefusedNamingTheBoundAndNotReadWhole() {
        AtomicLong written = new AtomicLong();
        server.on(r -> r.method().equals("GET") && r.path().equals("/api/v1/nodes/node-a"),
                (r, out) -> ScriptedApiServer.json(out, 200, NODE));
        server.on(HostileApiServerTest::list, (r, out) -> {
            ScriptedApiServer.streamHead(out);
            out.write(("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSliceList\",\"items\":[{\"metadata\""
                    + ":{\"name\":\"x\",\"annotations\":{\"a\":\"").getBytes(StandardCharsets.UTF_8));
            byte[] chunk = "a".repeat(1 << 16).getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < 1_600; i++) {
                out.write(chunk);
                written.addAndGet(chunk.length);
            }
            out.write("\"}}}]}".getBytes(StandardCharsets.UTF_8));
        });
        SlicePublisher p = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(Duration.ofHours(1)).watch(false).start();
        closing.add(p);

        p.publish(new DevicePool(SlicePublisherTest.vfs(2), Optional.empty()));

        Awaitility.await().atMost(WAIT).until(() -> p.status().failure() != null);
        assertThat(p.status().failure()).contains("more than the " + SlicePublisher.MAX_LIST_BYTES + " bytes");
        // The server could write what the socket buffers hold beyond the bound, never the 100 MiB.
        Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThat(written.get()).isLessThan(40L << 20));
        assertThat(server.count(r -> r.method().equals("POST"))).isZero();
    }

    @Test
    void aWatchEventOfTwoMebibytesEndsTheWatchNamingTheBound() {
        aPlainNode();
        server.on(HostileApiServerTest::watch, (r, out) -> {
            ScriptedApiServer.streamHead(out);
            out.write(("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"" + "x".repeat(2 << 20) + "\"}}}\n")
                    .getBytes(StandardCharsets.UTF_8));
        });
        FakeScheduler time = FakeScheduler.onOneThread();
        SlicePublisher p = publisher(time, 0.5);

        String log = dev.vgpu.testsupport.CapturedStderr.of(() -> {
            p.publish(new DevicePool(SlicePublisherTest.vfs(2), Optional.empty()));
            Awaitility.await().atMost(WAIT).until(() -> !p.watchOpen() && server.count(HostileApiServerTest::watch) == 1
                    && !time.pending().isEmpty() && time.pending().get(0).compareTo(Duration.ofMinutes(30)) < 0);
        });

        assertThat(log).contains("a watch event has more than the " + SlicePublisher.MAX_EVENT_BYTES + " bytes");
    }

    @Test
    void aSliceTheWatchSeesDeletedIsWrittenAgain() {
        aPlainNode();
        CountDownLatch deleteNow = new CountDownLatch(1);
        server.on(HostileApiServerTest::watch, (r, out) -> {
            ScriptedApiServer.streamHead(out);
            deleteNow.await();
            out.write(("{\"type\":\"DELETED\",\"object\":{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
                    + "\"ResourceSlice\",\"metadata\":{\"name\":\"s-1\"}}}\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            new CountDownLatch(1).await();
        });
        FakeScheduler time = FakeScheduler.onOneThread();
        SlicePublisher p = publisher(time, 0.5);
        p.publish(new DevicePool(SlicePublisherTest.vfs(2), Optional.empty()));
        Awaitility.await().atMost(WAIT).until(() -> server.count(HostileApiServerTest::watch) == 1);
        assertThat(p.watchOpen()).isTrue();

        deleteNow.countDown(); // what the kubelet does when it starts

        Awaitility.await().atMost(WAIT).until(() -> !time.pending().isEmpty()
                && time.pending().get(0).compareTo(SlicePublisher.EVENT_ROUND_SPACING) <= 0);
        time.forward(SlicePublisher.EVENT_ROUND_SPACING);
        assertThat(server.count(r -> r.method().equals("POST"))).isEqualTo(2);
        assertThat(p.status().generation()).isEqualTo(2);
    }

    @Test
    void aJvmErrorOnThePublishersThreadIsItsFailureForTheLivenessProbe() {
        aPlainNode();
        SlicePublisher p = SlicePublisher.builder(ApiServer.of(client), DriverName.DEFAULT, "node-a")
                .checkEvery(Duration.ofHours(1)).watch(false).clock(new java.time.Clock() {
                    @Override
                    public java.time.ZoneId getZone() {
                        return java.time.ZoneOffset.UTC;
                    }

                    @Override
                    public java.time.Clock withZone(java.time.ZoneId zone) {
                        return this;
                    }

                    @Override
                    public java.time.Instant instant() {
                        throw new OutOfMemoryError("Java heap space (a test's)");
                    }
                }).start();
        closing.add(p);

        p.publish(new DevicePool(SlicePublisherTest.vfs(2), Optional.empty()));

        Awaitility.await().atMost(WAIT).until(() -> p.failure().isPresent());
        assertThat(p.failure().get()).contains("OutOfMemoryError");
    }
}
