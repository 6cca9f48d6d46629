package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Registration against a kubelet that starts late, restarts, or is absent. */
@Tag("reliability")
class KubeletInterplayTest {

    @TempDir
    Path tmp;

    @Test
    void registersOnceTheKubeletStartsLateAndServesMeanwhile() {
        try (Harness h = Harness.withoutKubelet(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            await().atMost(Harness.WAIT).until(() -> Files.exists(h.pluginDir.resolve(H200.socketFileName())));
            assertThat(h.manager.plugin(H200).registered()).isFalse();

            h.startKubelet();

            h.await(k -> k.resources().containsKey(H200.fullName()));
            assertThat(h.kubelet.registrations()).extracting(Registration::resourceName)
                    .containsExactly(H200.fullName());
            // The kubelet dials back during Register, so its list can arrive before the Register call returns.
            await().atMost(Harness.WAIT).until(() -> h.manager.plugin(H200).registered());
        }
    }

    @Test
    void keepsRetryingAKubeletSocketThatRefusesThenRegistersWithTheRealOne() throws Exception {
        try (Harness h = Harness.withoutKubelet(tmp)) {
            Files.createDirectories(h.pluginDir);
            Files.createFile(h.pluginDir.resolve("kubelet.sock"));
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            await().atMost(Harness.WAIT).until(() -> Files.exists(h.pluginDir.resolve(H200.socketFileName())));
            assertThat(h.manager.plugin(H200).registered()).isFalse();

            h.startKubelet();

            h.await(k -> k.streaming(H200.fullName()));
            // The kubelet opens the stream while Register is still in flight; the answer lands a moment later.
            await().atMost(Harness.WAIT).until(() -> h.manager.plugin(H200).registered());
        }
    }

    @Test
    void kubeletRestartReRegistersEveryResourceWithDevicesAndHealthIntact() throws Exception {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create().addGroupNode(100);
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 1),
                    vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0)));
            h.await(k -> k.resources().size() == 2);
            Map<String, List<DeviceState>> before = h.kubelet.resources();
            assertThat(before.get(H200.fullName())).extracting(DeviceState::healthy).containsExactly(true, false);

            h.kubelet.restart();

            h.await(k -> k.registrations().size() == 4 && k.resources().equals(before)
                    && k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName()));
            assertThat(h.pluginDir.resolve(H200.socketFileName())).exists();
            assertThat(h.pluginDir.resolve(L40S_1Q.socketFileName())).exists();
            assertThat(h.kubelet.allocate(H200.fullName(), List.of("0000:41:00.0")).getContainerResponsesCount())
                    .isEqualTo(1);
        }
    }

    @Test
    void aNewKubeletSocketAloneTriggersReRegistrationOnTheSameSocket() {
        try (Harness h = Harness.watchOnly(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));
            h.kubelet.close();
            assertThat(h.pluginDir.resolve(H200.socketFileName())).exists();

            h.startKubelet();

            h.await(k -> k.streaming(H200.fullName()));
            assertThat(h.kubelet.registrations()).extracting(Registration::resourceName)
                    .containsExactly(H200.fullName());
        }
    }

    @Test
    void aDeletedPluginSocketAloneIsServedAgainAndReRegistered() throws Exception {
        try (Harness h = Harness.watchOnly(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));

            Files.delete(h.pluginDir.resolve(H200.socketFileName()));

            h.await(k -> k.registrations().size() == 2 && k.streaming(H200.fullName()));
            assertThat(h.kubelet.resources().get(H200.fullName()))
                    .containsExactly(new DeviceState("0000:41:00.0", "Healthy", OptionalInt.of(0)));
        }
    }

    @Test
    void aFileRenamedOverTheLivePluginSocketIsNoticedAndTheSocketServedAgain() throws Exception {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));
            Path socket = h.pluginDir.resolve(H200.socketFileName());
            Path squat = Files.writeString(h.pluginDir.resolve("squat.tmp"), "not a socket");

            Files.move(squat, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

            h.await(k -> k.registrations().size() == 2 && k.streaming(H200.fullName()));
            assertThat(Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther())
                    .as("a socket again").isTrue();
            assertThat(h.kubelet.resources().get(H200.fullName()))
                    .containsExactly(new DeviceState("0000:41:00.0", "Healthy", OptionalInt.of(0)));
        }
    }

    @Test
    void anotherSocketBoundAtThePluginPathIsNoticedAndTheSocketServedAgain() throws Exception {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));
            Path socket = h.pluginDir.resolve(H200.socketFileName());
            Path other = h.pluginDir.resolve("other.tmp");

            try (ServerSocketChannel squatter = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                squatter.bind(UnixDomainSocketAddress.of(other));
                Files.move(other, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

                h.await(k -> k.registrations().size() == 2 && k.streaming(H200.fullName()));
            }
            assertThat(h.kubelet.resources().get(H200.fullName()))
                    .containsExactly(new DeviceState("0000:41:00.0", "Healthy", OptionalInt.of(0)));
        }
    }

    @Test
    void closeStopsEveryPluginWithoutRetiringAndDeletesSockets() {
        Harness h = Harness.start(tmp);
        try {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0)));
            h.await(k -> k.streaming(H200.fullName()));
            int updates = h.kubelet.listUpdates(H200.fullName());

            h.manager.close();

            h.await(k -> !k.streaming(H200.fullName()));
            assertThat(h.kubelet.listUpdates(H200.fullName())).isEqualTo(updates);
            assertThat(h.kubelet.resources().get(H200.fullName())).hasSize(1);
            assertThat(h.pluginDir.resolve(H200.socketFileName())).doesNotExist();
            assertThat(h.manager.running()).isEmpty();
        } finally {
            h.close();
        }
    }
}
