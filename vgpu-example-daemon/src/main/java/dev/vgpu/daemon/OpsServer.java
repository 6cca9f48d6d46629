package dev.vgpu.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's HTTP listener (README, "Metrics and probes"): {@code /metrics} in the Prometheus text format,
 * {@code /healthz} (liveness) and {@code /readyz} (readiness), each answering 200 with {@code ok} or 503 with one
 * line per problem. Served by the JDK's built-in HTTP server on one thread of its own ({@code vgpu-ops}); only GET
 * and HEAD are answered.
 */
final class OpsServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OpsServer.class);

    private final HttpServer server;
    private final ExecutorService executor;

    private OpsServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Binds and starts serving.
     *
     * @param address   where to listen
     * @param metrics   what {@code /metrics} writes
     * @param liveness  the problems that make {@code /healthz} fail (empty list: live)
     * @param readiness the problems that make {@code /readyz} fail (empty list: ready)
     * @throws IOException when the address cannot be bound (the message says why, e.g. "Address already in use")
     */
    static OpsServer start(InetSocketAddress address, Metrics metrics, Supplier<List<String>> liveness,
                           Supplier<List<String>> readiness) throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "vgpu-ops");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", exchange -> answer(exchange, () -> {
            ByteArrayOutputStream body = new ByteArrayOutputStream(8192);
            metrics.write(body);
            return new Reply(200, Metrics.contentType(), body.toByteArray());
        }));
        server.createContext("/healthz", exchange -> answer(exchange, () -> probe(liveness.get())));
        server.createContext("/readyz", exchange -> answer(exchange, () -> probe(readiness.get())));
        server.createContext("/", exchange -> answer(exchange, () -> new Reply(404, "text/plain; charset=utf-8",
                "not found: try /metrics, /healthz or /readyz\n".getBytes(StandardCharsets.UTF_8))));
        server.start();
        LOG.info("metrics and probes on http://{}:{}/metrics, /healthz, /readyz", address.getHostString(),
                server.getAddress().getPort());
        return new OpsServer(server, executor);
    }

    /** The port actually bound (useful when 0 was asked for). */
    int port() {
        return server.getAddress().getPort();
    }

    private record Reply(int status, String contentType, byte[] body) {
    }

    private interface Handler {
        Reply handle() throws IOException;
    }

    private static Reply probe(List<String> problems) {
        String text = problems.isEmpty() ? "ok\n" : String.join("\n", problems) + "\n";
        return new Reply(problems.isEmpty() ? 200 : 503, "text/plain; charset=utf-8",
                text.getBytes(StandardCharsets.UTF_8));
    }

    private static void answer(HttpExchange exchange, Handler handler) {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            Reply reply;
            try {
                reply = handler.handle();
            } catch (IOException | RuntimeException e) {
                LOG.warn("{} failed: {}", exchange.getRequestURI().getPath(), e.toString());
                reply = new Reply(500, "text/plain; charset=utf-8",
                        ("error: " + e + "\n").getBytes(StandardCharsets.UTF_8));
            }
            exchange.getResponseHeaders().set("Content-Type", reply.contentType());
            boolean head = method.equals("HEAD");
            exchange.sendResponseHeaders(reply.status(), head ? -1 : reply.body().length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(reply.body());
                }
            }
        } catch (IOException e) {
            LOG.debug("client went away: {}", e.toString());
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
