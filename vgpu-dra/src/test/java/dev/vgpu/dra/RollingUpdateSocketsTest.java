package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.attach.Handovers;
import dev.vgpu.core.spi.Host;
import dev.vgpu.dra.grpc.registration.PluginInfo;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the pod's UID ({@code POD_UID}), the sockets carry it, as the Go helper's rolling-update naming does: an old
 * and a new pod of the DaemonSet never bind the same name, and a plugin that stops removes its own sockets only,
 * never the other pod's (before: fixed names, so the old pod's stop deleted the new pod's sockets and the kubelet
 * wiped the node's slices 30 s later).
 */
class RollingUpdateSocketsTest {

    static final String OLD_POD = "6f1f0a4e-0d3b-4c57-9b2c-1d5e8a7c3b10";
    static final String NEW_POD = "b2d7c9e1-5a4f-4e8b-8c61-0f3a2d9e7b55";

    @TempDir
    Path tmp;
    final TestKubelet kubelet = new TestKubelet();
    final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        kubelet.close();
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private DraPlugin.Builder builder(Path kubeletRoot) {
        ClaimReader none = ref -> new ClaimReader.Unavailable("no claims here");
        return DraPlugin.builder(Handovers.forHost(Host.of(tmp.resolve("host")), List.of()), none)
                .pool("node-a").kubeletRoot(kubeletRoot).cdiDir(tmp.resolve("cdi")).stateDir(tmp.resolve("state"));
    }

    /**
     * A unix socket some other process bound at {@code path} (the other pod's), through the same transport as the
     * plugin's (the JDK's own channels stop at 106 bytes, the kernel and Netty at 107).
     */
    private Path foreignSocket(Path path) throws IOException {
        Files.createDirectories(path.getParent());
        UnixDomainTransport transport = UnixDomainTransport.create("other-pod", 1, 1);
        closing.add(transport::close);
        io.grpc.Server server = transport.serve(path, List.of());
        closing.add(0, server::shutdownNow);
        return path;
    }

    @Test
    void theSocketsCarryThePodUidAndGetInfoNamesThatEndpoint() throws IOException {
        // The test directory itself as the kubelet root: /var/lib/kubelet is shorter than any temporary directory.
        Path root = tmp.toAbsolutePath();
        DraPlugin plugin = builder(root).podUid(OLD_POD).start();
        closing.add(plugin);

        assertThat(plugin.registrationSocket()).isEqualTo(root.resolve("plugins_registry/gpu.vgpu.dev-" + OLD_POD
                + "-reg.sock"));
        assertThat(plugin.draSocket()).isEqualTo(root.resolve("plugins/gpu.vgpu.dev/dra-" + OLD_POD + ".sock"));
        PluginInfo info = kubelet.getInfo(plugin.registrationSocket());
        assertThat(info.getEndpoint()).isEqualTo(plugin.draSocket().toString());
        assertThat(kubelet.prepare(plugin.draSocket()).getClaimsMap()).isEmpty();
        assertThat(root.resolve("plugins_registry/gpu.vgpu.dev-reg.sock")).doesNotExist();
        assertThat(root.resolve("plugins/gpu.vgpu.dev/dra.sock")).doesNotExist();
    }

    @Test
    void aStoppingPodRemovesItsOwnSocketsAndLeavesTheNewPodsAlone() throws IOException {
        Path root = tmp.toAbsolutePath();
        DraPlugin old = builder(root).podUid(OLD_POD).start();
        PluginPaths newPod = new PluginPaths(DriverName.DEFAULT, root, tmp.resolve("cdi"), tmp.resolve("state"),
                java.util.Optional.of(NEW_POD));
        Path newRegistration = foreignSocket(newPod.registrationSocket());
        Path newDra = foreignSocket(newPod.draSocket());
        assertThat(newDra).isNotEqualTo(old.draSocket());

        old.close();

        assertThat(old.registrationSocket()).doesNotExist();
        assertThat(old.draSocket()).doesNotExist();
        assertThat(newRegistration).exists();
        assertThat(newDra).exists();
    }

    @Test
    void whereThePodUidWouldPassTheSocketPathLimitEightHexDigitsOfItsHashStandForIt() throws IOException {
        Path root = tmp.resolve("kubelet").toAbsolutePath();
        // The longest driver whose hashed registration socket fits: with the whole UID neither socket would.
        String driver = "a".repeat(107 - UnixDomainTransport.pathBytes(root) - "/plugins_registry/".length()
                - "-12345678-reg.sock".length());
        DraPlugin plugin = builder(root).driver(new DriverName(driver)).podUid(OLD_POD).start();
        closing.add(plugin);

        for (Path socket : List.of(plugin.registrationSocket(), plugin.draSocket())) {
            assertThat(UnixDomainTransport.pathBytes(socket)).isLessThanOrEqualTo(107);
            assertThat(socket.getFileName().toString()).matches("(" + driver + "|dra)-[0-9a-f]{8}(-reg)?\\.sock")
                    .doesNotContain(OLD_POD);
        }
        assertThat(kubelet.getInfo(plugin.registrationSocket()).getEndpoint()).isEqualTo(plugin.draSocket()
                .toString());
    }

    @Test
    void aPodUidThatIsNoUidIsRefusedNamingIt() {
        assertThatThrownBy(() -> builder(tmp).podUid("../x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("POD_UID");
        assertThat(builder(tmp).podUid("  ")).isNotNull(); // blank: the fixed names
    }
}
