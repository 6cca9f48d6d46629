package dev.vgpu.dra.apiserver;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Every request the DRA driver makes to the API server, bounded (docs/RELIABILITY.md, "DRA mode"): each has a time
 * limit for the whole exchange, body included, and reads at most a given number of bytes of the answer, so that a
 * hung server or a 100 MiB list ends in a failure that names the bound, never in a thread held for minutes or a heap
 * filled. A watch is read line by line (one event a line), each line at most a given size. Requests go through the
 * client's own HTTP client: its address, credentials and TLS settings.
 *
 * <p>Threads: any thread may call; {@link #send} blocks the caller up to its time limit; a watch's lines are handed to
 * its consumer on the HTTP client's threads, one at a time.
 */
final class ApiRequests {

    /** The longest a request may take when its caller has no shorter deadline. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final KubernetesClient client;

    ApiRequests(KubernetesClient client) {
        this.client = client;
    }

    /**
     * An answer: its HTTP status and body.
     *
     * @param code       the HTTP status
     * @param body       the body, UTF-8
     * @param retryAfter the server's {@code Retry-After}, when it sent whole seconds
     */
    record Answer(int code, String body, Optional<Duration> retryAfter) {
        boolean ok() {
            return code >= 200 && code < 300;
        }
    }

    /** A request that did not get a whole answer within its bounds, in words. */
    static final class Failed extends Exception {
        Failed(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }

    /** The API server's base address joined with {@code path} (which starts with {@code /}). */
    String url(String path) {
        String base = client.getMasterUrl().toString();
        return (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + path;
    }

    /** The client's JSON mapper, for bodies. */
    io.fabric8.kubernetes.client.utils.KubernetesSerialization json() {
        return client.getKubernetesSerialization();
    }

    /**
     * One request, answered whole within {@code timeout} with at most {@code maxBytes} of body.
     *
     * @param method {@code GET}, {@code POST}, {@code PUT} or {@code DELETE}
     * @param body   the JSON body, or null
     * @throws Failed when the server does not answer in time, the body is larger, or the connection fails
     */
    Answer send(String method, String path, String body, Duration timeout, int maxBytes) throws Failed {
        HttpClient http = client.getHttpClient();
        HttpRequest.Builder request = http.newHttpRequestBuilder().uri(url(path))
                .timeout(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        if (body != null) {
            request.method(method, "application/json", body);
        } else if (!method.equals("GET")) {
            request.method(method, "application/json", "");
        }
        Collector collector = new Collector(maxBytes);
        CompletableFuture<HttpResponse<AsyncBody>> started = http.consumeBytes(request.build(), collector);
        CompletableFuture<Answer> answer = started.thenCompose(response -> {
            collector.body = response.body();
            response.body().consume();
            return response.body().done().thenApply(done -> new Answer(response.code(), collector.text(),
                    retryAfter(response)));
        });
        try {
            return answer.get(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            cancel(started, collector);
            throw new Failed("no whole answer to " + method + " " + path + " within " + timeout.toMillis()
                    + " ms", e);
        } catch (ExecutionException | CancellationException e) {
            cancel(started, collector);
            if (collector.tooLarge) {
                throw new Failed("the answer to " + method + " " + path + " has more than the " + maxBytes
                        + " bytes it may have", e);
            }
            throw new Failed(ApiServer.describe(e.getCause() == null ? e : e.getCause()), e);
        } catch (InterruptedException e) {
            cancel(started, collector);
            Thread.currentThread().interrupt();
            throw new Failed("interrupted while waiting for " + method + " " + path, e);
        }
    }

    /**
     * Opens a watch: each line of the answer (one JSON event) goes to {@code lines}; the stream's end or failure, in
     * words, to {@code ended}. A line longer than {@code maxLineBytes} ends the watch with a failure naming the bound.
     *
     * @return what cancels the watch
     */
    Runnable watch(String path, int maxLineBytes, Consumer<String> lines, Consumer<String> ended) {
        HttpClient http = client.getHttpClient();
        HttpRequest request = http.newHttpRequestBuilder().uri(url(path)).forStreaming().build();
        LineReader reader = new LineReader(maxLineBytes, lines);
        CompletableFuture<HttpResponse<AsyncBody>> started = http.consumeBytes(request, reader);
        started.whenComplete((response, error) -> {
            if (error != null) {
                ended.accept(ApiServer.describe(error));
                return;
            }
            reader.body = response.body();
            if (response.code() != 200) {
                response.body().cancel();
                ended.accept("HTTP " + response.code());
                return;
            }
            response.body().consume();
            response.body().done().whenComplete((done, failure) -> ended.accept(reader.tooLong
                    ? "a watch event has more than the " + maxLineBytes + " bytes it may have"
                    : failure == null ? "the server ended the watch" : ApiServer.describe(failure)));
        });
        return () -> cancel(started, reader);
    }

    private static void cancel(CompletableFuture<HttpResponse<AsyncBody>> started, Collector collector) {
        started.cancel(true);
        if (collector.body != null) {
            collector.body.cancel();
        }
        started.thenAccept(r -> r.body().cancel());
    }

    private static Optional<Duration> retryAfter(HttpResponse<?> response) {
        String value = response.header("Retry-After");
        if (value != null && value.strip().matches("[0-9]{1,6}")) {
            return Optional.of(Duration.ofSeconds(Long.parseLong(value.strip())));
        }
        return Optional.empty();
    }

    /** Collects a body up to a bound; beyond it, stops reading. Called on the HTTP client's threads. */
    private static class Collector implements AsyncBody.Consumer<List<ByteBuffer>> {
        final int maxBytes;
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        volatile AsyncBody body;
        volatile boolean tooLarge;

        Collector(int maxBytes) {
            this.maxBytes = maxBytes;
        }

        @Override
        public void consume(List<ByteBuffer> buffers, AsyncBody asyncBody) throws IOException {
            for (ByteBuffer buffer : buffers) {
                if (bytes.size() + buffer.remaining() > maxBytes) {
                    tooLarge = true;
                    asyncBody.cancel();
                    throw new IOException("more than " + maxBytes + " bytes");
                }
                byte[] chunk = new byte[buffer.remaining()];
                buffer.get(chunk);
                bytes.write(chunk);
            }
            asyncBody.consume();
        }

        String text() {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** Splits a stream into lines, each at most a bound; hands each to its consumer. */
    private static final class LineReader extends Collector {
        private final Consumer<String> lines;
        volatile boolean tooLong;

        LineReader(int maxLineBytes, Consumer<String> lines) {
            super(maxLineBytes);
            this.lines = lines;
        }

        @Override
        public void consume(List<ByteBuffer> buffers, AsyncBody asyncBody) throws IOException {
            for (ByteBuffer buffer : buffers) {
                while (buffer.hasRemaining()) {
                    byte b = buffer.get();
                    if (b == '\n') {
                        String line = text();
                        bytes.reset();
                        if (!line.isBlank()) {
                            lines.accept(line);
                        }
                    } else if (bytes.size() >= maxBytes) {
                        tooLong = true;
                        asyncBody.cancel();
                        throw new IOException("a line of more than " + maxBytes + " bytes");
                    } else {
                        bytes.write(b);
                    }
                }
            }
            asyncBody.consume();
        }
    }
}
