package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.kubelet.standin.StandInKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve --sample NAME}: the packaged jar serves a bundled sample host to a kubelet, and deletes it at exit. */
class ServeSampleIT {

    private static final Pattern HOST_ROOT = Pattern.compile("starting: host root (\\S+),");

    @TempDir
    Path tmp;

    /**
     * A sample host is written to a temporary directory, served to the kubelet, and deleted on SIGTERM, which ends the
     * daemon with status 0. Started under {@code nohup} (one launch for both cases: {@code nohup} changes nothing else),
     * the process inherits SIGHUP as ignored and the JVM keeps it so: the daemon says that rescans on SIGHUP are
     * unavailable instead of installing a handler that is never called. (A daemon started without {@code nohup} says no
     * such thing: {@code OperationsEndToEndIT}.)
     */
    @Test
    void aSampleHostIsServedAndDeletedOnSigtermAndASighupInheritedAsIgnoredIsSaidToBeUnavailable() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        Path log = tmp.resolve("daemon.log");
        Process process = new ProcessBuilder("nohup", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", DaemonProcess.jar().toString(), "dev.vgpu.daemon.VgpuDaemon", "serve", "--sample",
                "h200-sriov", "--device-plugin-dir", dir.toString(), "--no-nvml", "--metrics-address", "")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             DaemonProcess daemon = DaemonProcess.wrap(process, log)) {
            kubelet.await(Duration.ofSeconds(60), k -> k.streaming("nvidia.com/NVIDIA_H200X-1-18C"));
            assertThat(daemon.output()).contains("WARN Signals - SIGHUP is ignored in this process (started under"
                    + " nohup, or by a parent that ignores it); rescans on demand are unavailable");
            Matcher root = HOST_ROOT.matcher(daemon.output());
            assertThat(root.find()).as(daemon.output()).isTrue();
            Path sample = Path.of(root.group(1));
            assertThat(sample.getFileName().toString()).startsWith("vgpu-sample-h200-sriov-");
            assertThat(sample.resolve("sys/bus/pci/devices")).isDirectory();

            daemon.process.destroy(); // SIGTERM
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            assertThat(sample).as("the sample host is deleted at exit").doesNotExist();
        }
    }

    @Test
    void aSampleAndAHostRootAreRefused() throws Exception {
        try (DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("daemon.log"),
                "serve", "--sample", "h200-sriov", "--host-root", tmp.toString(), "--device-plugin-dir",
                tmp.toString())) {
            assertThat(daemon.awaitExit(30)).isEqualTo(2);
            assertThat(daemon.output()).contains("--sample and --host-root: give one of them");
        }
    }
}
