package dev.vgpu.dra.apiserver;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

/**
 * An API server that answers what a test scripts, over plain HTTP/1.1 on a loopback port, one request per connection:
 * the fault hooks fabric8's mock server lacks (429 for every GET, resets, a server that never answers, watches that
 * end with an error, floods of events, bodies of any size written as they go). Records every request. Threads: one
 * accept thread, one per connection; {@link #requests} is safe to read from any thread.
 */
final class ScriptedApiServer implements AutoCloseable {

    /** One request as it came. */
    record Request(String method, String target, String body) {
        /** The path without the query. */
        String path() {
            int q = target.indexOf('?');
            return q < 0 ? target : target.substring(0, q);
        }

        boolean watch() {
            return target.contains("watch=true");
        }
    }

    /** How a scripted answer is written: the whole exchange is the handler's, on the connection's thread. */
    @FunctionalInterface
    interface Handler {
        void answer(Request request, OutputStream out) throws Exception;
    }

    private record Route(Predicate<Request> when, Handler handler) {
    }

    private final ServerSocket socket;
    private final List<Route> routes = new CopyOnWriteArrayList<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final ExecutorService connections = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "scripted-api-server");
        t.setDaemon(true);
        return t;
    });

    ScriptedApiServer() throws IOException {
        socket = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        connections.execute(this::accept);
    }

    /** Answers requests that {@code when} picks with {@code handler}; later routes win. */
    ScriptedApiServer on(Predicate<Request> when, Handler handler) {
        routes.add(0, new Route(when, handler));
        return this;
    }

    /** Every request so far, in order. */
    List<Request> requests() {
        return List.copyOf(requests);
    }

    /** How many requests {@code which} picks. */
    long count(Predicate<Request> which) {
        return requests.stream().filter(which).count();
    }

    /** A client of this server that retries nothing, as the daemon's. */
    KubernetesClient client() {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + socket.getLocalPort())
                .withRequestTimeout(10_000).withConnectionTimeout(10_000).withRequestRetryBackoffLimit(0).build();
        return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new JdkHttpClientFactory())
                .build();
    }

    /** Writes a whole JSON answer. */
    static void json(OutputStream out, int code, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + code + " X\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
    }

    /** Starts an answer whose body runs until the connection closes (a watch, a huge list). */
    static void streamHead(OutputStream out) throws IOException {
        out.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private void accept() {
        while (!socket.isClosed()) {
            Socket connection;
            try {
                connection = socket.accept();
            } catch (IOException e) {
                return;
            }
            connections.execute(() -> serve(connection));
        }
    }

    private void serve(Socket connection) {
        try (connection) {
            InputStream in = connection.getInputStream();
            List<String> head = new ArrayList<>();
            StringBuilder line = new StringBuilder();
            while (true) {
                int b = in.read();
                if (b < 0) {
                    return;
                }
                if (b == '\n') {
                    String text = line.toString().strip();
                    line.setLength(0);
                    if (text.isEmpty()) {
                        break;
                    }
                    head.add(text);
                } else {
                    line.append((char) b);
                }
            }
            int length = 0;
            for (String h : head) {
                if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(h.substring("content-length:".length()).strip());
                }
            }
            String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            String[] first = head.get(0).split(" ");
            Request request = new Request(first[0], first[1], body);
            requests.add(request);
            for (Route route : routes) {
                if (route.when().test(request)) {
                    route.handler().answer(request, connection.getOutputStream());
                    return;
                }
            }
            json(connection.getOutputStream(), 404, "{\"kind\":\"Status\",\"code\":404,\"message\":\"not scripted\"}");
        } catch (Exception e) {
            // The client went away (a cancelled watch, a body it refused): that ends this connection only.
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        connections.shutdownNow();
    }
}
