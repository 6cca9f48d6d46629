package dev.vgpu.dra.apiserver;

import dev.vgpu.core.internal.Printable;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The API-server connection the DRA driver reads claims and publishes slices through: fabric8's
 * {@code kubernetes-client} on the JDK's own HTTP client (docs/BUILD.md, "vgpu-dra's API client"), used only as a
 * configured, authenticated HTTP client and a JSON mapper: every request goes through {@link ApiRequests}, which
 * bounds its time and the body it reads (docs/RELIABILITY.md, "DRA mode"). The client retries nothing by itself
 * (fabric8 would retry a GET ten times, nineteen seconds a claim): the claim reader and the publisher retry within
 * their own deadlines.
 * <pre>{@code
 * try (ApiServer api = ApiServer.connect(Optional.of(Path.of("/etc/kubeconfig")), threads)) { ... }
 * }</pre>
 * Threads: the JDK HTTP client's callbacks run on two threads ({@code vgpu-dra-api-N}) from the factory given; the
 * JDK client's own selector thread is the JDK's. Thread-safe.
 */
public final class ApiServer implements AutoCloseable {

    private final KubernetesClient client;
    private final ApiRequests requests;
    private final ExecutorService executor;

    private ApiServer(KubernetesClient client, ExecutorService executor) {
        this.client = client;
        this.requests = new ApiRequests(client);
        this.executor = executor;
    }

    /**
     * A connection from the kubeconfig file when one is given, else from the environment as fabric8 configures
     * itself: the pod's service account inside a cluster ({@code KUBERNETES_SERVICE_HOST}), else {@code $KUBECONFIG}
     * or {@code ~/.kube/config}. Nothing is contacted yet.
     *
     * @param threads makes the HTTP client's two callback threads
     * @throws IOException when the kubeconfig file cannot be read or makes no configuration, in words
     */
    public static ApiServer connect(Optional<Path> kubeconfig, ThreadFactory threads) throws IOException {
        ExecutorService executor = Executors.newFixedThreadPool(2, named(threads));
        try {
            KubernetesClient client = new KubernetesClientBuilder().withConfig(config(kubeconfig))
                    .withHttpClientFactory(new JdkHttpClientFactory() {
                        @Override
                        protected void additionalConfig(java.net.http.HttpClient.Builder builder) {
                            builder.executor(executor);
                        }
                    }).withTaskExecutor(executor).build();
            return new ApiServer(client, executor);
        } catch (IOException | RuntimeException e) {
            executor.shutdownNow();
            throw e;
        }
    }

    /**
     * A connection through a client the caller made and closes (tests, an embedder's own configuration). Its
     * configuration's retries are the caller's; {@link #connect} turns them off.
     */
    public static ApiServer of(KubernetesClient client) {
        return new ApiServer(Objects.requireNonNull(client, "client"), null);
    }

    /** The API server's address, for the log. */
    public String masterUrl() {
        return client.getMasterUrl().toString();
    }

    KubernetesClient client() {
        return client;
    }

    ApiRequests requests() {
        return requests;
    }

    /** The client's configuration, as {@link #connect} uses it (tests read it without building a client). */
    static Config config(Optional<Path> kubeconfig) throws IOException {
        Config config;
        if (kubeconfig.isPresent()) {
            if (!Files.isReadable(kubeconfig.get())) {
                throw new IOException("the kubeconfig " + kubeconfig.get() + " cannot be read");
            }
            try {
                // From the file, not its text: relative certificate, key and exec paths in it are relative to it.
                config = Config.fromKubeconfig(kubeconfig.get().toFile());
            } catch (KubernetesClientException | IllegalArgumentException | java.io.UncheckedIOException e) {
                throw new IOException("the kubeconfig " + kubeconfig.get() + " cannot be used: " + e.getMessage(), e);
            }
        } else {
            config = Config.autoConfigure(null);
        }
        config.setRequestTimeout((int) ApiRequests.REQUEST_TIMEOUT.toMillis());
        config.setConnectionTimeout((int) ApiRequests.REQUEST_TIMEOUT.toMillis());
        // The reader and the publisher retry within their own deadlines (docs/RELIABILITY.md, "DRA mode").
        config.setRequestRetryBackoffLimit(0);
        return config;
    }

    /** A failure of the API server or of reaching it, in one line without class names, escaped and cut. */
    static String describe(Throwable e) {
        if (e instanceof KubernetesClientException k && k.getCode() > 0) {
            String message = k.getStatus() != null && k.getStatus().getMessage() != null ? k.getStatus().getMessage()
                    : k.getMessage();
            return "HTTP " + k.getCode() + ": " + Printable.of(message, 200);
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        // A failed connection often carries no message (a closed channel): say so without naming the class.
        String message = root.getMessage() == null || root.getMessage().isBlank() ? "the connection failed"
                : root.getMessage();
        return Printable.of(message, 200);
    }

    /** Closes the client and ends the callback threads. */
    @Override
    public void close() {
        if (executor != null) {
            client.close();
            executor.shutdownNow();
        }
    }

    private static ThreadFactory named(ThreadFactory base) {
        AtomicInteger made = new AtomicInteger();
        return task -> {
            Thread t = Objects.requireNonNull(base.newThread(task), "the thread factory made no thread");
            t.setName("vgpu-dra-api-" + made.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
