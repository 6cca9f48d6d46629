package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kubelet that restarts again and again (docs/RELIABILITY.md): every restart re-registers every resource with
 * its devices and health intact, and the manager's threads and the process's file descriptors return to where
 * they were.
 */
@Tag("reliability")
class KubeletFaultsTest {

    @TempDir
    Path tmp;

    @Test
    void thirtyKubeletRestartsLeaveDevicesHealthThreadsAndDescriptorsAsTheyWere() throws Exception {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(41).addGroupNode(100);
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 1),
                    vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0)));
            h.await(k -> k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName()));
            Map<String, List<DeviceState>> before = h.kubelet.resources();
            long threads = h.threads.alive();
            long descriptors = openDescriptors();

            for (int restart = 1; restart <= 30; restart++) {
                h.kubelet.restart();
                int registrations = 2 * (restart + 1);
                h.await(k -> k.registrations().size() == registrations && k.resources().equals(before)
                        && k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName()));
            }

            assertThat(h.kubelet.resources()).isEqualTo(before);
            await().atMost(Harness.WAIT).untilAsserted(() -> assertThat(h.threads.alive())
                    .as("threads the manager was given, alive now: %s", h.threads.aliveNames()).isEqualTo(threads));
            // A descriptor or two may still be closing in the kernel's time; none may leak per restart.
            await().atMost(Harness.WAIT).until(() -> openDescriptors() <= descriptors + 2);
        }
    }

    @Test
    void everyKubeletRestartIsCountedOnceAndEveryResourceRegistersOnceMore() throws Exception {
        AtomicInteger restarts = new AtomicInteger();
        AtomicInteger registered = new AtomicInteger();
        PluginObserver counting = new PluginObserver() {
            @Override
            public void registered(ResourceName resource) {
                registered.incrementAndGet();
            }

            @Override
            public void kubeletRestarted() {
                restarts.incrementAndGet();
            }
        };
        Path dir = tmp.resolve("dp");
        SysfsTree host = SysfsTree.at(tmp.resolve("host"));
        host.mkdirs("dev/vfio");
        host.addGroupNode(41).addGroupNode(100);
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             PluginManager manager = PluginManager.builder().hostRoot(host.root()).devicePluginDir(dir)
                     .healthPollInterval(Duration.ofMillis(200))
                     .registrationBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).observer(counting).build()) {
            manager.apply(snapshot(passthrough("0000:41:00.0", 41, 0),
                    vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 100, 0)));
            kubelet.await(Harness.WAIT, k -> k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName()));
            await().atMost(Harness.WAIT).until(() -> registered.get() == 2);

            for (int restart = 1; restart <= 10; restart++) {
                kubelet.restart();
                int registrations = 2 * (restart + 1);
                kubelet.await(Harness.WAIT, k -> k.registrations().size() == registrations
                        && k.streaming(H200.fullName()) && k.streaming(L40S_1Q.fullName()));
                // The plugins' side too, before the next restart: an answer still on its way when the kubelet
                // restarts is one of the old kubelet, which a plugin rightly does not count (a loaded machine widened
                // that window until the count came out one short).
                await().atMost(Harness.WAIT).until(() -> registered.get() == registrations);
            }

            // The one memory of the kubelet's socket notices each new socket once, whoever looks first.
            await().atMost(Harness.WAIT).untilAsserted(() -> assertThat(List.of(restarts.get(), registered.get()))
                    .as("kubelet restarts counted, registrations").containsExactly(10, 22));
            assertThat(kubelet.registrations()).hasSize(22);
            assertThat(restarts).hasValue(10);
        }
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
