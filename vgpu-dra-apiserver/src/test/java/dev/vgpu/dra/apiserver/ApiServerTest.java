package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.testsupport.RecordingThreads;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ApiServer#connect} with a kubeconfig file, as the daemon's {@code --kubeconfig} does, against the mock. */
@EnableKubernetesMockClient(crud = true, https = false)
class ApiServerTest {

    KubernetesMockServer server;
    KubernetesClient client;
    @TempDir
    Path tmp;

    @Test
    void aKubeconfigFileNamingAPlainHttpServerReachesIt() throws Exception {
        client.resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().build()).create();
        Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: mock, cluster: {server: "http://%s:%d"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: mock, context: {cluster: mock, user: u}}]
                current-context: mock
                """.formatted(server.getHostName(), server.getPort()));

        RecordingThreads threads = new RecordingThreads("api");
        try (ApiServer fromFile = ApiServer.connect(Optional.of(kubeconfig), threads)) {
            ApiRequests.Answer answer = fromFile.requests().send("GET", "/api/v1/nodes/node-a", null,
                    java.time.Duration.ofSeconds(10), 1 << 20);
            assertThat(answer.code()).isEqualTo(200);
            assertThat(fromFile.requests().json().unmarshal(answer.body(), io.fabric8.kubernetes.api.model.Node.class)
                    .getMetadata().getUid()).isEqualTo(client.nodes().withName("node-a").get().getMetadata().getUid());
            assertThat(fromFile.masterUrl()).contains(Integer.toString(server.getPort()));
        }
        // The HTTP client's threads came from the factory and end with the connection.
        assertThat(threads.made()).isPositive();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> threads.alive() == 0);
    }

    @Test
    void relativePathsInAKubeconfigAreRelativeToItsDirectory() throws Exception {
        Path dir = java.nio.file.Files.createDirectories(tmp.resolve("conf"));
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: mock, cluster: {server: "http://%s:%d", certificate-authority: ca.crt}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: mock, context: {cluster: mock, user: u}}]
                current-context: mock
                """.formatted(server.getHostName(), server.getPort()));

        // The configuration only: building a client would read the (absent) certificate.
        assertThat(Path.of(ApiServer.config(Optional.of(kubeconfig)).getCaCertFile()))
                .isEqualTo(dir.resolve("ca.crt"));
    }

    @Test
    void theClientRetriesNothingByItself() throws Exception {
        assertThat(ApiServer.config(Optional.empty()).getRequestRetryBackoffLimit()).isZero();
    }

    @Test
    void aKubeconfigThatCannotBeReadIsAnErrorNamingIt() {
        Path missing = tmp.resolve("missing");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ApiServer.connect(Optional.of(missing), Thread::new))
                .isInstanceOf(java.io.IOException.class).hasMessageContaining(missing.toString());
    }
}
