package dev.vgpu.daemon.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Plan;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.config.ConfigParser;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.ops.ResourceGauge;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's one place for what happens to it ({@link NodeAgent#handle}), driven without signals: a SIGHUP reloads
 * the configuration, hands a changed XID policy to the adapter, prepares the host and rescans, all on the agent's
 * thread and in that order; the host is prepared before the first scan too.
 */
class NodeAgentEventsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String GPU = "0000:41:00.0";

    @TempDir
    Path tmp;

    /** Everything the agent did, in order, with the thread it did it on. */
    private final List<String> events = new CopyOnWriteArrayList<>();

    private void record(String what) {
        events.add(what + " on " + Thread.currentThread().getName());
    }

    /** An adapter that records what the agent hands it. */
    private final class RecordingAdapter implements NodeAdapter {
        @Override
        public void apply(Snapshot next, Plan plan) {
            record("apply " + next.deviceCount() + " devices");
        }

        @Override
        public void markGpuUnhealthy(PciAddress gpu, OptionalInt gpuInstance, String reason) {
            record("mark " + gpu);
        }

        @Override
        public void recoverGpuFaultsAfter(Duration quiet) {
            record("recover after " + quiet);
        }

        @Override
        public List<ResourceGauge> resources() {
            return List.of();
        }

        @Override
        public List<String> notLive() {
            return List.of();
        }

        @Override
        public List<String> notReady() {
            return List.of();
        }

        @Override
        public String served(Snapshot first) {
            return "recording adapter: " + first.deviceCount() + " devices";
        }

        @Override
        public void close() {
            record("close");
        }
    }

    @Test
    void aHangupReloadsAppliesTheChangedXidPolicyPreparesTheHostAndRescansInThatOrderOnTheAgentsThread()
            throws Exception {
        SysfsTree tree = SysfsTree.at(tmp.resolve("host"));
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(41).numa(0).create();
        Path file = Files.writeString(tmp.resolve("config.yaml"), "version: v1\n");
        LiveConfig config = new LiveConfig(Optional.of(file), "--config", ConfigParser.read(file));
        NodeAgent.Settings base = Agents.settings(tree.root(), new HostOptions(null, null, true),
                RescanInterval.DISABLED, config);
        NodeAgent.Settings settings = new NodeAgent.Settings(base.host(), base.pciIds(), base.sources(),
                base.stateDirectory(), base.interval(), base.metricsAddress(), base.scanDeadline(),
                base.failedScansLimit(), base.config(), base.nvml(), () -> record("prepare"));
        NodeAdapter.Opener opener = new NodeAdapter.Opener() {
            @Override
            public String describe() {
                return "recording adapter";
            }

            @Override
            public NodeAdapter open(NodeAdapter.Context context) {
                record("open, recovery after " + context.gpuFaultRecovery());
                return new RecordingAdapter();
            }
        };

        String caller = Thread.currentThread().getName();
        try (NodeAgent agent = NodeAgent.start(settings, opener, a -> { })) {
            assertThat(events).containsExactly("open, recovery after PT0S on " + caller, "prepare on vgpu-rescan",
                    "apply 1 devices on vgpu-rescan");
            events.clear();

            Files.writeString(file, "version: v1\nhealth: {xid: {recoverAfter: 10m}}\n");
            tree.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(0).create();
            agent.post(new AgentEvent.Hangup());
            await().atMost(WAIT).until(() -> events.size() == 3);
            assertThat(events).containsExactly("recover after PT10M on vgpu-rescan", "prepare on vgpu-rescan",
                    "apply 2 devices on vgpu-rescan");
            events.clear();

            // The same file again: nothing to hand on, and an unchanged host applies nothing.
            agent.post(new AgentEvent.Hangup());
            agent.post(new AgentEvent.NvmlUp());
            await().atMost(WAIT).until(() -> events.contains("prepare on vgpu-rescan"));
            agent.rescanNow(); // after the rounds the events asked for
            assertThat(events).containsExactly("prepare on vgpu-rescan");
        }
        assertThat(events).endsWith("close on " + caller);
    }

    /**
     * A mode whose resource names are attributes (DRA) gets a scanner that keeps a device an operator's rename would
     * merge with another source's under its own name; the device plugin's mode gets the skip (one socket per name).
     */
    @Test
    void anAdapterWithNamesAsAttributesKeepsEveryDeviceARenameWouldMerge() throws Exception {
        SysfsTree tree = SysfsTree.at(tmp.resolve("host"));
        tree.passthroughGpu(GPU, 0x2335).iommuGroup(41).numa(0).create();
        tree.nvidiaGpu("0000:06:00.0", 0x2236).numa(0).iommuGroup(20).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-593", "NVIDIA A10-8Q", 40);
        Path file = Files.writeString(tmp.resolve("config.yaml"), """
                version: v1
                resources:
                  - match: {source: passthrough}
                    name: nvidia.com/gpu
                  - match: {source: mdev}
                    name: nvidia.com/gpu
                """);
        LiveConfig config = new LiveConfig(Optional.of(file), "--config", ConfigParser.read(file));
        NodeAgent.Settings settings = Agents.settings(tree.root(), new HostOptions(null, null, true),
                RescanInterval.DISABLED, config);
        for (boolean attributes : new boolean[] {false, true}) {
            events.clear();
            NodeAdapter.Opener opener = new NodeAdapter.Opener() {
                @Override
                public String describe() {
                    return "recording adapter, names as attributes " + attributes;
                }

                @Override
                public boolean namesAreAttributes() {
                    return attributes;
                }

                @Override
                public NodeAdapter open(NodeAdapter.Context context) {
                    return new RecordingAdapter();
                }
            };
            try (NodeAgent agent = NodeAgent.start(settings, opener, a -> { })) {
                assertThat(events).as("names as attributes: %s", attributes)
                        .containsExactly("apply " + (attributes ? 2 : 1) + " devices on vgpu-rescan");
                assertThat(agent.firstServed().skipped()).as("names as attributes: %s", attributes)
                        .hasSize(attributes ? 0 : 1);
            }
        }
    }
}
