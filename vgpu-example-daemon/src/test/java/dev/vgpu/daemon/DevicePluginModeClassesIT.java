package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar carries fabric8 for {@code serve --mode dra}, but device-plugin mode never loads it: the JVM's
 * class-loading log of a serving daemon names no fabric8, Jackson 3 or {@code dev.vgpu.dra} class (docs/BUILD.md).
 */
class DevicePluginModeClassesIT {

    @TempDir
    Path tmp;

    @Test
    void aServingDevicePluginLoadsNoFabric8NorJacksonNorDraClass() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        Path classes = tmp.resolve("classes.txt");
        try (DaemonProcess daemon = DaemonProcess.start(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Xlog:class+load:file=" + classes), DaemonProcess.jar().toString(), tmp.resolve("daemon.log"),
                "serve", "--sample", "h200-sriov", "--no-nvml", "--device-plugin-dir", dir.toString(),
                "--metrics-address", "127.0.0.1:0")) {
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> daemon.output().contains("serving 3"
                    + " resources"));
            daemon.process.destroy();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
        }
        List<String> loaded = Files.readAllLines(classes);
        assertThat(loaded).as("the log lists the daemon's own classes").anyMatch(l -> l.contains(
                "dev.vgpu.daemon.Daemon "));
        assertThat(loaded).noneMatch(l -> l.contains(" io.fabric8.") || l.contains(" tools.jackson.")
                || l.contains(" dev.vgpu.dra."));
    }
}
