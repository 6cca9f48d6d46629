package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.spi.Host;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.dra.grpc.registration.PluginInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the kubelet's plugin watcher sees (docs/DRA.md §1), over real unix sockets: GetInfo's fields and version
 * order, the verdict kept, both DRA versions served on the endpoint, empty calls, and paths too long refused.
 */
class RegistrationTest {

    @TempDir
    Path tmp;
    TestKubelet kubelet = new TestKubelet();
    DraPlugin plugin;

    @BeforeEach
    void start() throws IOException {
        plugin = builder(tmp.resolve("kubelet")).start();
    }

    @AfterEach
    void stop() {
        kubelet.close();
        if (plugin != null) {
            plugin.close();
        }
    }

    private DraPlugin.Builder builder(Path kubeletRoot) {
        ClaimReader none = ref -> new ClaimReader.Unavailable("no claims here");
        return DraPlugin.builder(Handovers.forHost(Host.of(tmp.resolve("host")), List.of()), none)
                .pool("node-a").kubeletRoot(kubeletRoot).cdiDir(tmp.resolve("cdi")).stateDir(tmp.resolve("state"));
    }

    @Test
    void getInfoNamesADraPluginOfTheDriverItsAbsoluteEndpointAndV1First() {
        Path registrationSocket = tmp.resolve("kubelet/plugins_registry/gpu.vgpu.dev-reg.sock");
        assertThat(plugin.registrationSocket()).isEqualTo(registrationSocket.toAbsolutePath());

        PluginInfo info = kubelet.getInfo(registrationSocket);

        assertThat(info.getType()).isEqualTo("DRAPlugin");
        assertThat(info.getName()).isEqualTo("gpu.vgpu.dev");
        assertThat(info.getEndpoint()).isEqualTo(tmp.resolve("kubelet/plugins/gpu.vgpu.dev/dra.sock")
                .toAbsolutePath().toString());
        assertThat(Path.of(info.getEndpoint())).isAbsolute().exists();
        assertThat(info.getSupportedVersionsList()).containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin");
    }

    @Test
    void theKubeletsVerdictIsKeptAcceptedOrRefusedWithItsWords() {
        assertThat(plugin.registration()).isEqualTo(new KubeletRegistration.Waiting());

        kubelet.notify(plugin.registrationSocket(), false, "endpoint outside the kubelet root");
        assertThat(plugin.registration()).isEqualTo(new KubeletRegistration.Rejected(
                "endpoint outside the kubelet root"));

        kubelet.notify(plugin.registrationSocket(), true, "");
        assertThat(plugin.registration()).isEqualTo(new KubeletRegistration.Registered());
    }

    @Test
    void bothVersionsAnswerEmptyCallsAsALivenessProbeSendsThem() {
        Path endpoint = Path.of(kubelet.getInfo(plugin.registrationSocket()).getEndpoint());

        assertThat(kubelet.prepare(endpoint).getClaimsMap()).isEmpty();
        assertThat(kubelet.unprepare(endpoint).getClaimsMap()).isEmpty();
        assertThat(kubelet.prepareV1beta1(endpoint).getClaimsMap()).isEmpty();
        assertThat(kubelet.unprepareV1beta1(endpoint).getClaimsMap()).isEmpty();
    }

    @Test
    void bothVersionsAnswerEveryClaimTheSameWay() {
        Path endpoint = plugin.draSocket();

        var v1 = kubelet.prepare(endpoint, TestKubelet.claim("vms", "gpu", "uid-1"));
        var v1beta1 = kubelet.prepareV1beta1(endpoint, dev.vgpu.dra.grpc.v1beta1.Claim.newBuilder()
                .setNamespace("vms").setName("gpu").setUid("uid-1").build());

        assertThat(v1.getClaimsMap()).containsOnlyKeys("uid-1");
        assertThat(v1.getClaimsOrThrow("uid-1").getError()).isEqualTo("no claims here");
        assertThat(v1beta1.getClaimsOrThrow("uid-1").getError()).isEqualTo("no claims here");
        assertThat(kubelet.unprepareV1beta1(endpoint, dev.vgpu.dra.grpc.v1beta1.Claim.newBuilder()
                .setNamespace("vms").setName("gpu").setUid("uid-1").build()).getClaimsOrThrow("uid-1").getError())
                .isEmpty();
    }

    @Test
    void closingRemovesBothSocketsAndAFreshInstanceServesAgain() throws IOException {
        plugin.close();
        assertThat(plugin.registrationSocket()).doesNotExist();
        assertThat(plugin.draSocket()).doesNotExist();

        plugin = builder(tmp.resolve("kubelet")).start();
        assertThat(kubelet.getInfo(plugin.registrationSocket()).getName()).isEqualTo("gpu.vgpu.dev");
    }

    @Test
    void aKubeletRootTooDeepForAUnixSocketPathIsRefusedBeforeAnythingIsBound() {
        Path deep = tmp.resolve("k".repeat(UnixDomainTransport.MAX_PATH_BYTES));

        assertThatThrownBy(() -> builder(deep).start()).isInstanceOf(IOException.class)
                .hasMessageContaining("bytes, more than the 107");
        assertThat(Files.exists(deep)).isFalse();
    }

    @Test
    void aPluginWithoutPoolOrStateDirectoryIsRefusedNamingTheCall() {
        ClaimReader none = ref -> new ClaimReader.Unavailable("none");
        Handovers handovers = Handovers.forHost(Host.of(tmp), List.of());
        assertThatThrownBy(() -> DraPlugin.builder(handovers, none).stateDir(tmp).start())
                .hasMessageContaining("pool(name)");
        assertThatThrownBy(() -> DraPlugin.builder(handovers, none).pool("node-a").start())
                .hasMessageContaining("stateDir(path)");
    }
}
