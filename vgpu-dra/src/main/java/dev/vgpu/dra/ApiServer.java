package dev.vgpu.dra;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The API-server client the DRA plugin reads claims and publishes slices with: fabric8's
 * {@code kubernetes-client} on the JDK's own HTTP client (docs/BUILD.md, "vgpu-dra's API client").
 * <pre>{@code
 * try (KubernetesClient client = ApiServer.connect(Optional.of(Path.of("/etc/kubeconfig")))) { ... }
 * }</pre>
 */
public final class ApiServer {

    private ApiServer() {
    }

    /**
     * A client from the kubeconfig file when one is given, else from the environment as fabric8 configures
     * itself: the pod's service account inside a cluster ({@code KUBERNETES_SERVICE_HOST}), else
     * {@code $KUBECONFIG} or {@code ~/.kube/config}. Nothing is contacted yet.
     *
     * @throws IOException when the kubeconfig file cannot be read or makes no configuration, in words
     */
    public static KubernetesClient connect(Optional<Path> kubeconfig) throws IOException {
        return new KubernetesClientBuilder().withConfig(config(kubeconfig))
                .withHttpClientFactory(new JdkHttpClientFactory()).build();
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
        config.setRequestTimeout(10_000);
        config.setConnectionTimeout(10_000);
        return config;
    }

    /** A failure of the API server or of reaching it, in one line without class names. */
    static String describe(RuntimeException e) {
        if (e instanceof KubernetesClientException k && k.getCode() > 0) {
            String message = k.getStatus() != null && k.getStatus().getMessage() != null ? k.getStatus().getMessage()
                    : k.getMessage();
            return "HTTP " + k.getCode() + ": " + dev.vgpu.core.internal.Printable.of(message, 200);
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? "no answer" : root.getMessage();
        return dev.vgpu.core.internal.Printable.of(message, 200);
    }
}
