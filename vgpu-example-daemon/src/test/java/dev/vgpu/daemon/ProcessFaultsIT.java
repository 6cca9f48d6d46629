package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.fixture.HoldingSource;
import dev.vgpu.daemon.serve.DirectoryLock;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Process-level faults of the packaged daemon (docs/RELIABILITY.md): SIGTERM while the first scan is held, and
 * while a rescan is held; each must end with exit code 0, no plugin socket left and nothing written outside the
 * device-plugin directory.
 */
@Tag("reliability")
class ProcessFaultsIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    private Path root;
    private Path dir;
    private SysfsTree tree;

    private DaemonProcess start(String... extra) throws Exception {
        root = Files.createDirectories(tmp.resolve("host"));
        dir = Files.createDirectories(tmp.resolve("device-plugins"));
        tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).virtualFunctions(2, 100).catalog(Map.of(1414L, "NVIDIA H200X-1-18C")).create();
        tree.configureVf(SysfsTree.vfAddress(CARD, 0), 1414);
        for (String hold : extra) {
            tree.writeFile(hold, "");
        }
        Path pciIds = Files.writeString(tmp.resolve("pci.ids"), "");
        Path holding = DaemonProcess.sourceJar(tmp.resolve("holding.jar"), HoldingSource.class);
        return DaemonProcess.start(DaemonProcess.jar() + File.pathSeparator + holding, tmp.resolve("daemon.log"),
                "serve", "--host-root", root.toString(), "--device-plugin-dir", dir.toString(), "--pci-ids",
                pciIds.toString(), "--no-nvml", "--metrics-address", "");
    }

    @Test
    void sigtermDuringTheFirstScanExitsCleanly() throws Exception {
        try (StandInKubelet kubelet = StandInKubelet.start(tmp.resolve("device-plugins"));
             DaemonProcess daemon = start("etc/hold-scan")) {
            Awaitility.await().atMost(WAIT).until(() -> daemon.output().contains("first scan of the host"));
            assertThat(daemon.output()).doesNotContain("serving ");
            assertThat(kubelet.registrations()).isEmpty();

            daemon.process.destroy(); // SIGTERM while HoldingSource holds the first scan

            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            assertOnlyKubeletSocketAndLockLeft();
        }
    }

    @Test
    void sigtermDuringAHeldRescanExitsCleanly() throws Exception {
        try (StandInKubelet kubelet = StandInKubelet.start(tmp.resolve("device-plugins"));
             DaemonProcess daemon = start()) {
            kubelet.await(WAIT, k -> k.streaming(P118));
            tree.writeFile("etc/hold-scan", "");
            Process hup = new ProcessBuilder("kill", "-HUP", Long.toString(daemon.process.pid())).start();
            assertThat(hup.waitFor()).isZero();
            Awaitility.await().atMost(WAIT).until(() -> daemon.output().contains("SIGHUP: rescanning now"));

            daemon.process.destroy();

            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            assertOnlyKubeletSocketAndLockLeft();
        }
    }

    private void assertOnlyKubeletSocketAndLockLeft() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .isSubsetOf(List.of(DirectoryLock.FILE, StandInKubelet.SOCKET, "kubelet_internal_checkpoint"));
        }
        try (Stream<Path> files = Files.list(tmp)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("daemon.log", "device-plugins", "holding.jar", "host", "pci.ids");
        }
    }
}
