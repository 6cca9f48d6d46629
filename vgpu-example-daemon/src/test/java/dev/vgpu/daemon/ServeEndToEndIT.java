package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar as a separate process with a 5 s rescan interval against an in-test stand-in kubelet:
 * registration, the first lists, four kinds of tree changes seen on the kubelet side, a passthrough stream
 * left alone, and SIGTERM.
 */
class ServeEndToEndIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final String P235 = "nvidia.com/NVIDIA_H200X-2-35C";
    private static final String P371 = "nvidia.com/NVIDIA_H200X-3-71C";
    private static final String WHOLE_GPU = "nvidia.com/2331";
    private static final Map<Long, String> TYPES = Map.of(1414L, "NVIDIA H200X-1-18C", 1416L, "NVIDIA H200X-2-35C",
            1418L, "NVIDIA H200X-3-71C");
    /** The spec says "within two intervals" (10 s); the bound adds slack for a loaded 2-core CI machine. */
    private static final Duration TWO_INTERVALS_AND_SLACK = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void rescansReachTheKubeletAndSigtermCleansUp() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).numa(0).virtualFunctions(8, 100).vfioCdevs(10).catalog(TYPES).create();
        String vf0 = SysfsTree.vfAddress(CARD, 0);
        String vf1 = SysfsTree.vfAddress(CARD, 1);
        String vf2 = SysfsTree.vfAddress(CARD, 2);
        String vf3 = SysfsTree.vfAddress(CARD, 3);
        String vf4 = SysfsTree.vfAddress(CARD, 4);
        tree.configureVf(vf0, 1414).configureVf(vf1, 1414).configureVf(vf2, 1416);
        tree.passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).numa(1).create();

        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("daemon.log"),
                     "serve", "--host-root", root.toString(), "--device-plugin-dir", dir.toString(),
                     "--rescan-interval", "5s", "--pci-ids", Files.createFile(tmp.resolve("empty-pci.ids")).toString(),
                     "--metrics-address", "127.0.0.1:0")) {
            kubelet.await(Duration.ofSeconds(60), k -> k.resources().keySet().containsAll(List.of(P118, P235, WHOLE_GPU))
                    && k.streaming(P118) && k.streaming(P235) && k.streaming(WHOLE_GPU));
            assertThat(ids(kubelet, P118)).containsExactly(vf0, vf1);
            assertThat(ids(kubelet, P235)).containsExactly(vf2);
            assertThat(kubelet.resources().get(WHOLE_GPU)).containsExactly(
                    new DeviceState("0000:41:00.0", "Healthy", java.util.OptionalInt.of(1)));
            assertThat(kubelet.registrations()).extracting(Registration::resourceName)
                    .contains(P118, P235, WHOLE_GPU);
            assertThat(kubelet.registrations()).allSatisfy(r -> {
                assertThat(r.version()).isEqualTo("v1beta1");
                assertThat(r.endpoint()).isEqualTo("kubevirt-" + r.resourceName().substring("nvidia.com/".length())
                        + ".sock");
            });
            int passthroughLists = kubelet.listUpdates(WHOLE_GPU);

            tree.configureVf(vf3, 1414);      // into an existing profile
            tree.configureVf(vf4, 1418);      // a new profile
            tree.unconfigureVf(vf2);          // the only 2-35C goes away
            tree.removeFunction(vf1);         // a VF vanishes
            long changed = System.nanoTime();

            kubelet.await(TWO_INTERVALS_AND_SLACK, k -> ids(k, P118).equals(List.of(vf0, vf3))
                    && ids(k, P371).equals(List.of(vf4)) && ids(k, P235).isEmpty());
            System.out.printf("rescan changes reached the kubelet %d ms after the tree changed%n",
                    Duration.ofNanos(System.nanoTime() - changed).toMillis());
            assertThat(kubelet.registrations()).extracting(Registration::resourceName).contains(P371);
            assertThat(kubelet.listUpdates(WHOLE_GPU)).as("the passthrough stream got nothing").isEqualTo(passthroughLists);
            // Logged after the lists go out (and the edits may straddle two rounds): awaited, not asserted at once.
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> daemon.output().contains("Updated " + P118)
                    && daemon.output().contains("Added " + P371) && daemon.output().contains("Removed " + P235));

            daemon.process.destroy(); // SIGTERM
            long stop = System.nanoTime();
            assertThat(daemon.awaitExit(30)).as(daemon.output()).isZero();
            System.out.printf("SIGTERM to exit: %d ms%n", Duration.ofNanos(System.nanoTime() - stop).toMillis());
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sock")))
                        .containsExactly(StandInKubelet.SOCKET);
            }
        }
    }

    private static List<String> ids(StandInKubelet kubelet, String resource) {
        return kubelet.resources().getOrDefault(resource, List.of()).stream().map(DeviceState::id).sorted().toList();
    }
}
