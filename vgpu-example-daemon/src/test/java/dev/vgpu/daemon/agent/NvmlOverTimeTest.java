package dev.vgpu.daemon.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.jna.Library;
import com.sun.jna.Native;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon with NVML over time, in process so that the test holds the controls of the same NVML stub the daemon
 * loaded (vgpu-nvml's {@code src/test/c/nvml_stub.c}, compiled by this module's build): a fully consumed card
 * (every catalog down to its header), NVML that fails to initialise at start and comes up later, and one transient
 * NVML error once it is up. What the stand-in kubelet sees over real unix sockets is the assertion.
 */
@Tag("reliability")
class NvmlOverTimeTest {

    /** The stub's card 1: an L40S at this address whose NVML types are 1414 "L40S-24Q" and 1428 "L40S-48Q". */
    private static final String CARD = "0000:c1:00.0";
    private static final int CARD_INDEX = 1;
    private static final String Q24 = "nvidia.com/NVIDIA_L40S-24Q";
    private static final String Q48 = "nvidia.com/NVIDIA_L40S-48Q";
    private static final int DRIVER_NOT_LOADED = 9;
    private static final int GPU_IS_LOST = 15;
    private static final Duration WAIT = Duration.ofSeconds(60);

    /** The stub's test-only control symbols used here. */
    interface Control extends Library {
        void stub_reset();

        void stub_set_init_result(int rc);

        void stub_fail_bus_id_lookups(int device, int rc, int times);

        long stub_calls(String function, int device);

        int stub_init_refcount();
    }

    @TempDir
    Path tmp;
    private Control stub;

    @BeforeEach
    void loadStub() {
        String library = System.getProperty("vgpu.nvml.stub");
        assertThat(library).as("system property vgpu.nvml.stub, set by the build").isNotNull();
        assertThat(Path.of(library)).as("the NVML stub the build compiles").isRegularFile();
        stub = Native.load(library, Control.class);
        stub.stub_reset();
    }

    @AfterEach
    void resetStub() {
        stub.stub_set_init_result(0);
        stub.stub_reset();
    }

    @Test
    void nvmlThatComesUpAfterStartNamesAFullCardStartsXidHealthAndOneErrorLaterChangesNothing() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path pluginDir = Files.createDirectories(tmp.resolve("device-plugins"));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(2, 100).catalog(Map.of()).create();
        String vf0 = SysfsTree.vfAddress(CARD, 0);
        String vf1 = SysfsTree.vfAddress(CARD, 1);
        tree.configureVf(vf0, 1414).configureVf(vf1, 1428).addGroupNode(100).addGroupNode(101);
        // Rounds every 200 ms: the agent takes the interval as given (the 5 s floor is the configured value's, applied
        // when it is parsed), so the rounds that retry NVML and look up the card come quickly.
        NodeAgent.Settings settings = Agents.settings(root, Agents.nvmlStub(),
                new RescanInterval(Duration.ofMillis(200), Optional.empty()), LiveConfig.none());
        stub.stub_set_init_result(DRIVER_NOT_LOADED);

        try (StandInKubelet kubelet = StandInKubelet.start(pluginDir);
             NodeAgent daemon = Agents.devicePlugins(settings, pluginDir)) {
            // NVML is down and every catalog of the card is a header: nothing can name the two vGPUs yet.
            Snapshot first = daemon.firstServed();
            assertThat(first.resources()).isEmpty();
            assertThat(first.skipped()).extracting(skip -> skip.id()).contains(vf0, vf1);

            stub.stub_set_init_result(0);

            // The next rescan retries NVML first: the names resolve, and the XID watch starts (the stub queues
            // XID 79, a critical one, on this card), so both vGPUs turn Unhealthy.
            kubelet.await(WAIT, k -> ids(k).equals(Map.of(Q24, List.of(vf0), Q48, List.of(vf1))));
            kubelet.await(WAIT, k -> health(k, Q24).equals(Map.of(vf0, false))
                    && health(k, Q48).equals(Map.of(vf1, false)));
            assertThat(kubelet.resources().keySet()).containsExactlyInAnyOrder(Q24, Q48);
            int registrations = kubelet.registrations().size();
            Map<String, Integer> updates = Map.of(Q24, kubelet.listUpdates(Q24), Q48, kubelet.listUpdates(Q48));
            long lookups = stub.stub_calls("nvmlDeviceGetHandleByPciBusId_v2", CARD_INDEX);

            stub.stub_fail_bus_id_lookups(CARD_INDEX, GPU_IS_LOST, 1);

            // Two more lookups of the card: the failing one, and one of a later rescan after it.
            await().atMost(WAIT).until(() ->
                    stub.stub_calls("nvmlDeviceGetHandleByPciBusId_v2", CARD_INDEX) >= lookups + 2);
            assertThat(ids(kubelet)).isEqualTo(Map.of(Q24, List.of(vf0), Q48, List.of(vf1)));
            assertThat(kubelet.registrations()).as("no resource went away and came back").hasSize(registrations);
            assertThat(Map.of(Q24, kubelet.listUpdates(Q24), Q48, kubelet.listUpdates(Q48))).isEqualTo(updates);
        }
        assertThat(stub.stub_init_refcount()).as("NVML shut down with the daemon").isZero();
    }

    private static Map<String, List<String>> ids(StandInKubelet k) {
        return k.resources().entrySet().stream().filter(e -> !e.getValue().isEmpty())
                .collect(Collectors.toMap(Map.Entry::getKey,
                        e -> e.getValue().stream().map(DeviceState::id).sorted().toList(), (a, b) -> a, TreeMap::new));
    }

    private static Map<String, Boolean> health(StandInKubelet k, String resource) {
        return k.resources().getOrDefault(resource, List.of()).stream()
                .collect(Collectors.toMap(DeviceState::id, DeviceState::healthy, (a, b) -> a, TreeMap::new));
    }
}
