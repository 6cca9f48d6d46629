package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.serve.DirectoryLock;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged daemon under {@code umask 000} (docs/RELIABILITY.md, "The kubelet and the sockets"): its sockets are
 * {@code 0600} and a device-plugin directory it re-creates is {@code 0750}; with {@code --state-dir} its single-daemon
 * lock lives there, so a second daemon is still refused after a kubelet restart emptied the device-plugin directory.
 */
@Tag("reliability")
class FileModesAndLockIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SOCKET = "kubevirt-GH100_H100_PCIE.sock";

    @TempDir
    Path tmp;

    @Test
    void underUmaskZeroSocketsAreOwnerOnlyARecreatedDirectoryIs0750AndTheLockSurvivesAKubeletWipe()
            throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree.at(root).passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).create().addGroupNode(41);
        Path plugins = Files.createDirectories(tmp.resolve("kubelet/device-plugins"));
        Path state = tmp.resolve("state");
        Path pciIds = Files.writeString(tmp.resolve("pci.ids"), "10de  NVIDIA\n\t2331  GH100 [H100 PCIe]\n");
        List<String> args = List.of("serve", "--host-root", root.toString(), "--device-plugin-dir",
                plugins.toString(), "--state-dir", state.toString(), "--pci-ids", pciIds.toString(), "--no-nvml",
                "--metrics-address", "");

        try (Umask000 first = Umask000.start(tmp.resolve("first.log"), args)) {
            try (StandInKubelet kubelet = StandInKubelet.start(plugins)) {
                kubelet.await(WAIT, k -> k.streaming("nvidia.com/GH100_H100_PCIE"));
                assertThat(first.daemon.process.isAlive()).isTrue();
                assertThat(mode(plugins.resolve(SOCKET))).isEqualTo("rw-------");
                assertThat(Files.isRegularFile(state.resolve(DirectoryLock.FILE))).isTrue();
                assertThat(Files.exists(plugins.resolve(DirectoryLock.FILE))).as("the lock is in the state dir")
                        .isFalse();
            }

            // A kubelet restart empties the directory; the lock in the state dir still refuses a second daemon.
            try (Stream<Path> files = Files.list(plugins)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
            }
            try (Umask000 second = Umask000.start(tmp.resolve("second.log"), args)) {
                assertThat(second.daemon.awaitExit(60)).as(second.daemon.output()).isEqualTo(2);
                assertThat(second.daemon.output()).contains("another vgpu daemon is already serving " + plugins,
                        state.resolve(DirectoryLock.FILE).toString());
            }

            // The whole directory gone: the daemon makes it again, 0750, and serves its socket 0600 in it.
            Awaitility.await().atMost(WAIT).ignoreExceptions().until(() -> {
                SysfsTree.deleteRecursively(plugins); // the daemon may serve its socket again meanwhile
                return !Files.exists(plugins);
            });
            // bind makes the socket with 0777 less the umask; the daemon narrows it a moment later (under umask 000
            // the directory's 0750 is what keeps others out in between).
            Awaitility.await().atMost(WAIT).ignoreExceptions().until(() -> mode(plugins.resolve(SOCKET))
                    .equals("rw-------"));
            assertThat(mode(plugins)).isEqualTo("rwxr-x---");
        }
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }

    /** The packaged daemon started by {@code sh} after {@code umask 000}. */
    private record Umask000(DaemonProcess daemon) implements AutoCloseable {
        static Umask000 start(Path log, List<String> args) throws IOException {
            List<String> command = new ArrayList<>(List.of("sh", "-c", "umask 000 && exec \"$@\"", "sh",
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1", "-cp", DaemonProcess.jar().toString(), "dev.vgpu.daemon.VgpuDaemon"));
            command.addAll(args);
            return new Umask000(DaemonProcess.wrap(new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start(), log));
        }

        @Override
        public void close() {
            daemon.close();
        }
    }
}
