package dev.vgpu.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.Snapshot;
import dev.vgpu.testsupport.RecordingThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The ops port cannot be held by its clients (docs/RELIABILITY.md, "The ops port"): slow, idle and oversized clients
 * never delay {@code /healthz}. Clients here use a 20 s read timeout as a hang guard only; what is asserted is the
 * answer, never a duration.
 */
@Tag("reliability")
class OpsServerTest {

    private static final int GUARD_MILLIS = 20_000;

    private final AtomicReference<List<String>> liveness = new AtomicReference<>(List.of());
    private OpsServer server;
    /** Every event-loop thread of this test's servers. */
    private final RecordingThreads threads = new RecordingThreads("ops");
    private final List<Socket> clients = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        start(OpsServer.Limits.DEFAULT);
    }

    private void start(OpsServer.Limits limits) throws IOException {
        if (server != null) {
            server.close();
        }
        Metrics metrics = new Metrics(Clock.systemUTC());
        metrics.readFrom(List::of, Snapshot::empty, () -> false);
        server = OpsServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), metrics, liveness::get,
                List::of, limits, threads);
    }

    @AfterEach
    void stop() throws IOException {
        for (Socket s : clients) {
            s.close();
        }
        server.close();
    }

    @Test
    void aClientThatSendsOneByteAndWaitsDoesNotDelayHealthz() throws IOException {
        Socket slow = connect();
        slow.getOutputStream().write('G');
        slow.getOutputStream().flush();
        for (int i = 0; i < 5; i++) {
            assertThat(request("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")).startsWith("HTTP/1.1 200 OK")
                    .endsWith("\r\n\r\nok\n");
        }
    }

    @Test
    void idleConnectionsBeyondTheCapCloseTheEldestAndHealthzIsStillAnswered() throws IOException {
        // Timeouts far beyond the hang guard: only the cap can close these.
        start(new OpsServer.Limits(Duration.ofMinutes(5), Duration.ofMinutes(5), 8));
        List<Socket> idle = new ArrayList<>();
        for (int i = 0; i < 8 * 4; i++) {
            idle.add(connect());
        }
        assertThat(request("GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 OK");
        for (Socket eldest : idle.subList(0, 8)) {
            assertThat(eldest.getInputStream().read()).as("closed to make room").isEqualTo(-1);
        }
        Socket newest = idle.get(idle.size() - 1);
        newest.getOutputStream().write("GET /healthz HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(read(newest.getInputStream(), true)).as("the newest kept its place").startsWith("HTTP/1.1 200 OK");
    }

    @Test
    void aConnectionThatSendsNoRequestIsClosedByTheServer() throws IOException {
        start(new OpsServer.Limits(Duration.ofMillis(200), Duration.ofMinutes(5), 32));
        Socket silent = connect();
        assertThat(silent.getInputStream().read()).as("closed by the server, not by the hang guard").isEqualTo(-1);
    }

    @Test
    void aClientThatTricklesItsHeadersIsClosedBeforeItFinishes() throws IOException, InterruptedException {
        start(new OpsServer.Limits(Duration.ofMillis(500), Duration.ofMinutes(5), 32));
        Socket trickle = connect();
        OutputStream out = trickle.getOutputStream();
        byte[] header = "GET /healthz HTTP/1.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
        out.write(header);
        out.flush();
        boolean closed = false;
        for (int i = 0; i < 200 && !closed; i++) {
            try {
                out.write('a');
                out.flush();
                Thread.sleep(100);
            } catch (IOException e) {
                closed = true; // reset by the server
            }
        }
        assertThat(closed || trickle.getInputStream().read() == -1).isTrue();
        assertThat(request("GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 OK");
    }

    @Test
    void oversizedHeadersAreRefusedAndTheServerGoesOn() throws IOException {
        String huge = "GET /healthz HTTP/1.1\r\nX-Big: " + "a".repeat(OpsServer.MAX_HEADER_BYTES * 2) + "\r\n\r\n";
        assertThat(request(huge)).startsWith("HTTP/1.1 400");
        assertThat(request("GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 OK");
    }

    @Test
    void probesSayTheirProblemsOtherMethodsAndPathsAreRefusedHeadHasNoBody() throws IOException {
        liveness.set(List.of("a discovery round has been running for 2m"));
        assertThat(request("GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503")
                .endsWith("a discovery round has been running for 2m\n");
        assertThat(request("GET /readyz?verbose HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200").endsWith("ok\n");
        assertThat(request("POST /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n")).startsWith("HTTP/1.1 405")
                .containsIgnoringCase("allow: GET, HEAD");
        assertThat(request("GET /nope HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 404");
        String head = request("HEAD /healthz HTTP/1.1\r\n\r\n");
        assertThat(head).startsWith("HTTP/1.1 503").containsIgnoringCase("content-length: "
                + "a discovery round has been running for 2m\n".length()).endsWith("\r\n\r\n");
        assertThat(request("GET /metrics HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200")
                .contains("vgpu_nvml_available 0");
    }

    @Test
    void everyAnswerClosesItsConnection() throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write("GET /healthz HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(read(s.getInputStream(), true)).containsIgnoringCase("connection: close");
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
    }

    @Test
    void closingEndsTheServersThread() throws IOException {
        assertThat(request("GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200");
        assertThat(threads.aliveNames()).containsExactly(OpsServer.THREAD_NAME);
        server.close();
        // close waited for the event loop to end; its thread may still be on its last instructions.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(threads.aliveNames()).isEmpty());
        assertThat(threads.made()).as("one thread serves every connection").isEqualTo(1);
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
        s.setSoTimeout(GUARD_MILLIS);
        clients.add(s);
        return s;
    }

    /** Sends one raw request and reads one answer: its head, then as many body bytes as it says. */
    private String request(String raw) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
            s.setSoTimeout(GUARD_MILLIS);
            s.getOutputStream().write(raw.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return read(s.getInputStream(), !raw.startsWith("HEAD "));
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no complete answer within the hang guard", e);
        }
    }

    private static String read(InputStream in, boolean withBody) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                return head.toString();
            }
            head.append((char) c);
        }
        Matcher length = Pattern.compile("(?im)^content-length: (\\d+)").matcher(head);
        if (!withBody || !length.find()) {
            return head.toString();
        }
        return head + new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
    }
}
