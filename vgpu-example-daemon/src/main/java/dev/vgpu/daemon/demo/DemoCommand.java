package dev.vgpu.daemon.demo;

import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Host;
import dev.vgpu.daemon.agent.NodeAgent;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.Subcommand;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.deviceplugin.DevicePluginAdapter;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.PciIdsDatabase;
import dev.vgpu.daemon.scan.Samples;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.DeviceSpec;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * {@code demo}: the whole main job on the bundled {@code h200-sriov} sample, with a stand-in kubelet in a
 * temporary directory and the real plugin servers on real unix sockets; then profile changes and a rescan.
 */
public final class DemoCommand implements Callable<Integer> {

    /** {@code demo}'s table: only what demo uses. */
    static final CliCommand TABLE = new CliCommand("demo", List.of(
            "Run the daemon on the bundled h200-sriov sample host against an in-process stand-in kubelet.",
            "It shows what the kubelet sees, allocates one vGPU, changes profiles, rescans, shows the changes and"
                    + " exits 0. Needs no GPU and no kubelet; everything lives in a temporary directory that is"
                    + " deleted at the end. Without --pci-ids the sample's own pci.ids excerpt names its GPUs."),
            HostOptions.OPTIONS);

    /** The subcommand: its table and how a parsed command line becomes a {@code DemoCommand}. */
    public static final Subcommand SUBCOMMAND = Subcommand.of(TABLE, (args, console) -> new DemoCommand(args,
            console.out()));

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String PROFILE_1_18C = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final String PROFILE_2_35C = "nvidia.com/NVIDIA_H200X-2-35C";
    private static final String PROFILE_3_71C = "nvidia.com/NVIDIA_H200X-3-71C";
    private static final String PASSTHROUGH_RESOURCE = "nvidia.com/GH100_H100_PCIE";

    final HostOptions host;
    private final PrintWriter out;

    DemoCommand(CliArgs args, PrintWriter out) {
        host = HostOptions.of(args);
        this.out = out;
    }

    @Override
    public Integer call() throws Exception {
        host.requireNamedFiles();
        Path pluginDir = Files.createTempDirectory("vgpu-demo-device-plugins-");
        try (Samples.Materialized sample = Samples.materialize(Samples.H200_SRIOV);
             StandInKubelet kubelet = StandInKubelet.start(pluginDir)) {
            out.printf("vgpu demo: sample host %s at %s%n", Samples.H200_SRIOV, sample.root());
            out.printf("stand-in kubelet listening on %s%n%n", kubelet.socket());
            out.flush();
            PciIdsDatabase names = Samples.pciIdsFor(host);
            NodeAgent.Settings settings = new NodeAgent.Settings(Host.of(sample.root()).withPciIds(names.names()),
                    new NodeAgent.PciIdsInUse(names.toString(), names.description()), DeviceSources.load(),
                    Optional.empty(), RescanInterval.DISABLED, Optional.empty(), NodeAgent.DEFAULT_SCAN_DEADLINE,
                    NodeAgent.DEFAULT_FAILED_SCANS_LIMIT, LiveConfig.none(), host,
                    NodeAgent.HostPreparation.NONE);
            try (NodeAgent daemon = NodeAgent.start(settings, DevicePluginAdapter.opener(pluginDir), agent -> { })) {
                // One plugin per resource of the first scan.
                int expected = daemon.firstServed().resources().size();
                kubelet.await(WAIT, k -> k.resources().size() == expected
                        && k.resources().keySet().stream().allMatch(k::streaming));
                section(out, "1. What the kubelet sees after start");
                printResources(out, kubelet);
                daemon.firstServed().skipped().forEach(skip -> out.printf("skipped %s (%s): %s%n", skip.id(),
                        skip.source(), skip.reason()));

                section(out, "2. Allocate one " + PROFILE_1_18C + " for a VM");
                String vf = kubelet.resources().get(PROFILE_1_18C).get(0).id();
                printAllocation(out, PROFILE_1_18C, vf, kubelet.allocate(PROFILE_1_18C, List.of(vf)));

                section(out, "3. Change profiles on card " + Samples.CARD_A + " and rescan");
                int passthroughUpdates = kubelet.listUpdates(PASSTHROUGH_RESOURCE);
                changeProfiles(out, sample.tree());
                daemon.rescanNow();
                Predicate<StandInKubelet> rescanSeen = k -> {
                    Map<String, List<DeviceState>> r = k.resources();
                    return r.containsKey(PROFILE_3_71C) && r.get(PROFILE_1_18C).size() == 3
                            && (!r.containsKey(PROFILE_2_35C) || r.get(PROFILE_2_35C).isEmpty());
                };
                kubelet.await(WAIT, rescanSeen);
                printResources(out, kubelet);
                out.printf("%nThe passthrough resource %s got %d new list(s) from this rescan (expected 0).%n",
                        PASSTHROUGH_RESOURCE, kubelet.listUpdates(PASSTHROUGH_RESOURCE) - passthroughUpdates);
                section(out, "4. Shut down");
            }
            List<String> left = socketsIn(pluginDir);
            out.printf("every plugin stopped; plugin sockets left in %s: %s%n", pluginDir,
                    left.isEmpty() ? "none" : left);
            out.println("demo finished");
            out.flush();
            return 0;
        } finally {
            SysfsTree.deleteRecursively(pluginDir);
        }
    }

    private static void changeProfiles(PrintWriter out, SysfsTree tree) {
        String vf2 = SysfsTree.vfAddress(Samples.CARD_A, 2);
        String vf3 = SysfsTree.vfAddress(Samples.CARD_A, 3);
        String vf4 = SysfsTree.vfAddress(Samples.CARD_A, 4);
        tree.configureVf(vf3, Samples.H200_1_18C);
        tree.rewriteCatalog(vf3, Map.of(Samples.H200_1_18C, Samples.H200_TYPES.get(Samples.H200_1_18C)));
        out.printf("  %s: current_vgpu_type 0 -> %d (one more 1-18C)%n", vf3, Samples.H200_1_18C);
        tree.unconfigureVf(vf2);
        out.printf("  %s: current_vgpu_type %d -> 0 (the only 2-35C is destroyed)%n", vf2, Samples.H200_2_35C);
        tree.configureVf(vf4, Samples.H200_3_71C);
        tree.rewriteCatalog(vf4, Map.of(Samples.H200_3_71C, Samples.H200_TYPES.get(Samples.H200_3_71C)));
        out.printf("  %s: current_vgpu_type 0 -> %d (a new profile, 3-71C)%n", vf4, Samples.H200_3_71C);
        out.flush();
    }

    private static void section(PrintWriter out, String title) {
        out.printf("%n== %s ==%n", title);
        out.flush();
    }

    private static void printResources(PrintWriter out, StandInKubelet kubelet) {
        for (Map.Entry<String, List<DeviceState>> e : new TreeMap<>(kubelet.resources()).entrySet()) {
            out.printf("%s  (%d devices%s)%n", e.getKey(), e.getValue().size(),
                    e.getValue().isEmpty() ? ": retired, the plugin sent an empty list and stopped" : "");
            for (DeviceState d : e.getValue()) {
                out.printf("    %-14s %-9s numa %s%n", d.id(), d.health(),
                        d.numaNode().isPresent() ? Integer.toString(d.numaNode().getAsInt()) : "-");
            }
        }
        out.flush();
    }

    private static void printAllocation(PrintWriter out, String resource, String id, AllocateResponse response) {
        ContainerAllocateResponse container = response.getContainerResponses(0);
        out.printf("Allocate(%s, [%s]) ->%n  env:%n", resource, id);
        new TreeMap<>(container.getEnvsMap()).forEach((k, v) -> out.printf("    %s=%s%n", k, v));
        out.printf("  device nodes:%n");
        for (DeviceSpec spec : container.getDevicesList()) {
            out.printf("    %s (%s)%n", spec.getHostPath(), spec.getPermissions());
        }
        out.flush();
    }

    private static List<String> socketsIn(Path dir) throws java.io.IOException {
        try (var files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sock"))
                    .filter(n -> !n.equals(StandInKubelet.SOCKET)).sorted().toList();
        }
    }
}
