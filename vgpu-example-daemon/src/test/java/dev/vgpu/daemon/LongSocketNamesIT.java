package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar in a device-plugin directory as long as the kubelet's {@code /var/lib/kubelet/device-plugins}
 * (31 bytes), with two vGPU profiles whose resource names (62 and 63 characters) share their first 52: both
 * register with cut socket names that differ by their hash (docs/HOST-FACTS.md §2.4), and the kubelet streams and
 * allocates through them; a short name keeps its full socket name.
 */
class LongSocketNamesIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String NAME_62 = "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-TWO_CHARS";
    private static final String NAME_63 = "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-THREE_CHRS";
    /** The first 52 characters, then the first 8 hex digits of the SHA-256 of {@code nvidia.com/<name>}. */
    private static final String SOCKET_62 = "kubevirt-NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-a64c4e76.sock";
    private static final String SOCKET_63 = "kubevirt-NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-10740420.sock";
    private static final String WHOLE_GPU = "nvidia.com/2331";

    @TempDir
    Path tmp;

    @Test
    void longNamesRegisterOnCutSocketsThatTheKubeletStreamsAndAllocatesThrough() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).numa(0).virtualFunctions(2, 100).catalog(Map.of(
                1414L, NAME_62.replace('_', ' '), 1416L, NAME_63.replace('_', ' '))).create();
        String vf0 = SysfsTree.vfAddress(CARD, 0);
        String vf1 = SysfsTree.vfAddress(CARD, 1);
        tree.configureVf(vf0, 1414).configureVf(vf1, 1416);
        tree.passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).numa(1).create();
        Path dir = kubeletLengthDirectory();
        try {
            assertThat(NAME_62).hasSize(62);
            assertThat(NAME_63).hasSize(63);
            assertThat((dir + "/" + SOCKET_62).getBytes(StandardCharsets.UTF_8)).hasSize(107);
            try (StandInKubelet kubelet = StandInKubelet.start(dir);
                 DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("daemon.log"),
                         "serve", "--host-root", root.toString(), "--device-plugin-dir", dir.toString(),
                         "--metrics-address", "127.0.0.1:0",
                         "--pci-ids", Files.createFile(tmp.resolve("empty-pci.ids")).toString())) {
                String long62 = "nvidia.com/" + NAME_62;
                String long63 = "nvidia.com/" + NAME_63;
                try {
                    kubelet.await(Duration.ofSeconds(60), k -> k.streaming(long62) && k.streaming(long63)
                            && k.streaming(WHOLE_GPU));
                } catch (IllegalStateException e) {
                    throw new AssertionError(e.getMessage() + "; daemon output:\n" + daemon.output(), e);
                }

                assertThat(kubelet.registrations()).extracting(Registration::resourceName, Registration::endpoint)
                        .contains(tuple(long62, SOCKET_62),
                                tuple(long63, SOCKET_63),
                                tuple(WHOLE_GPU, "kubevirt-2331.sock"));
                assertThat(kubelet.resources().get(long62)).extracting(DeviceState::id).containsExactly(vf0);
                assertThat(kubelet.resources().get(long63)).extracting(DeviceState::id).containsExactly(vf1);
                assertThat(kubelet.allocation(long62, List.of(vf0)).envs())
                        .containsEntry("PCI_RESOURCE_NVIDIA_COM_" + NAME_62, vf0);
                assertThat(kubelet.allocation(long63, List.of(vf1)).envs())
                        .containsEntry("PCI_RESOURCE_NVIDIA_COM_" + NAME_63, vf1);
                try (Stream<Path> files = Files.list(dir)) {
                    assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sock")))
                            .containsExactlyInAnyOrder(StandInKubelet.SOCKET, SOCKET_62, SOCKET_63,
                                    "kubevirt-2331.sock");
                }

                daemon.process.destroy(); // SIGTERM
                assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            }
        } finally {
            deleteTree(dir);
        }
    }

    /** A new directory {@code /tmp/vgpu-sock-<16 hex digits>}: 31 bytes, as long as the kubelet's own. */
    private static Path kubeletLengthDirectory() throws IOException {
        SecureRandom random = new SecureRandom();
        for (int attempt = 0; ; attempt++) {
            byte[] suffix = new byte[8];
            random.nextBytes(suffix);
            Path dir = Path.of("/tmp/vgpu-sock-" + HexFormat.of().formatHex(suffix));
            try {
                Files.createDirectory(dir);
                assertThat(dir.toString().getBytes(StandardCharsets.UTF_8))
                        .hasSameSizeAs("/var/lib/kubelet/device-plugins".getBytes(StandardCharsets.UTF_8));
                return dir;
            } catch (FileAlreadyExistsException e) {
                if (attempt > 10) {
                    throw e;
                }
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
