package dev.vgpu.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Guarded;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A device stays what it was when advertised: real-layout host trees scanned by the built-in sources, rescans
 * reconciled into a real plugin manager, and a stand-in kubelet over real unix sockets watching the result.
 */
@Tag("reliability")
class IdentityOverTimeTest {

    static final Map<Long, String> L40S = Map.of(1152L, "NVIDIA L40S-1Q", 1153L, "NVIDIA L40S-2Q",
            1155L, "NVIDIA L40S-4Q");
    static final String Q1 = "nvidia.com/NVIDIA_L40S-1Q";
    static final String Q2 = "nvidia.com/NVIDIA_L40S-2Q";
    static final String Q4 = "nvidia.com/NVIDIA_L40S-4Q";

    @TempDir
    Path tmp;
    Harness h;
    /** One instance for the whole test, as a daemon keeps its sources: vendor-vfio remembers names. */
    final List<DeviceSource> sources = List.of(new PassthroughSource(), new MdevSource(), new VendorVfioSource());
    final AtomicReference<VgpuTypeResolver> nvml = new AtomicReference<>(VgpuTypeResolver.none());

    @BeforeEach
    void start() {
        h = Harness.start(tmp);
    }

    @AfterEach
    void close() {
        h.close();
    }

    /** One rescan as the daemon runs it: every source on a fresh per-scan host, then the reconciled plan. */
    void rescan() {
        Host host = h.host.host().withVgpuTypes(VgpuTypeResolver.memoizing(nvml.get())).forScan();
        Snapshot.Builder next = Snapshot.builder();
        for (DeviceSource source : sources) {
            try {
                next.add(source.name(), source.discover(host));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        h.apply(next.build());
    }

    static Map<String, List<String>> ids(StandInKubelet k) {
        return k.resources().entrySet().stream().filter(e -> !e.getValue().isEmpty())
                .collect(Collectors.toMap(Map.Entry::getKey,
                        e -> e.getValue().stream().map(DeviceState::id).sorted().toList(), (a, b) -> a, TreeMap::new));
    }

    static Map<String, Boolean> health(StandInKubelet k, String resource) {
        return k.resources().getOrDefault(resource, List.of()).stream()
                .collect(Collectors.toMap(DeviceState::id, DeviceState::healthy, (a, b) -> a, TreeMap::new));
    }

    void card(String pf, int vfs, int firstGroup) {
        h.host.sriovCard(pf, 0x26b9).virtualFunctions(vfs, firstGroup).catalog(L40S).create();
        for (int i = 0; i < vfs; i++) {
            h.host.addGroupNode(firstGroup + i);
        }
    }

    @Test
    void scenario1AVfReconfiguredWithRescansOffIsRefusedAndUnhealthyUntilItIsBack() {
        card("0000:1b:00.0", 2, 100);
        h.host.configureVf("0000:1b:00.4", 1152).configureVf("0000:1b:00.5", 1152);
        rescan();
        h.await(k -> health(k, Q1).equals(Map.of("0000:1b:00.4", true, "0000:1b:00.5", true)));

        h.host.configureVf("0000:1b:00.4", 1155);

        assertThatThrownBy(() -> h.kubelet.allocate(Q1, List.of("0000:1b:00.4")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).isEqualTo("device 0000:1b:00.4 was vGPU type 1152"
                            + " when advertised and is now vGPU type 1155");
                });
        h.await(k -> health(k, Q1).equals(Map.of("0000:1b:00.4", false, "0000:1b:00.5", true)));

        h.host.unconfigureVf("0000:1b:00.4");
        assertThatThrownBy(() -> h.kubelet.allocate(Q1, List.of("0000:1b:00.4")))
                .hasMessageContaining("is now without a vGPU type");

        h.host.configureVf("0000:1b:00.4", 1152);
        h.await(k -> health(k, Q1).equals(Map.of("0000:1b:00.4", true, "0000:1b:00.5", true)));
        assertThat(h.kubelet.allocate(Q1, List.of("0000:1b:00.4")).getContainerResponsesCount()).isEqualTo(1);
    }

    @Test
    void scenario1AVfWhoseFunctionIsAnotherVendorsNowIsRefusedAndUnhealthyUntilItIsBack() {
        card("0000:1b:00.0", 2, 100);
        h.host.configureVf("0000:1b:00.4", 1152).configureVf("0000:1b:00.5", 1152);
        rescan();
        h.await(k -> health(k, Q1).equals(Map.of("0000:1b:00.4", true, "0000:1b:00.5", true)));

        h.host.writeAttribute("0000:1b:00.4", "vendor", "0x8086\n");

        assertThatThrownBy(() -> h.kubelet.allocate(Q1, List.of("0000:1b:00.4")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).isEqualTo("device 0000:1b:00.4 was vendor 10de"
                            + " when advertised and is now vendor 8086");
                });
        h.await(k -> health(k, Q1).equals(Map.of("0000:1b:00.4", false, "0000:1b:00.5", true)));
        assertThat(h.kubelet.allocate(Q1, List.of("0000:1b:00.5")).getContainerResponsesCount()).isEqualTo(1);

        h.host.writeAttribute("0000:1b:00.4", "vendor", "0x10de\n").writeAttribute("0000:1b:00.4", "device", "0x1234\n");
        assertThatThrownBy(() -> h.kubelet.allocate(Q1, List.of("0000:1b:00.4")))
                .hasMessageContaining("was device 26b9 when advertised and is now device 1234");

        h.host.writeAttribute("0000:1b:00.4", "device", "0x26b9\n");
        h.await(k -> health(k, Q1).equals(Map.of("0000:1b:00.4", true, "0000:1b:00.5", true)));
        assertThat(h.kubelet.allocate(Q1, List.of("0000:1b:00.4")).getContainerResponsesCount()).isEqualTo(1);
    }

    @Test
    void scenario1AnMdevRecreatedWithAnotherTypeIsUnhealthyAndARescanMovesIt() {
        String uuid = "aa618089-8b16-4d01-a136-25a0f3c73123";
        h.host.nvidiaGpu("0000:06:00.0", 0x1eb8).create();
        h.host.mdev(uuid, "0000:06:00.0", "nvidia-222", "GRID T4-1Q", 7);
        rescan();
        h.await(k -> health(k, "nvidia.com/GRID_T4-1Q").equals(Map.of(uuid, true)));

        h.host.removeMdev(uuid).mdev(uuid, "0000:06:00.0", "nvidia-223", "GRID T4-2Q", 7);
        h.await(k -> health(k, "nvidia.com/GRID_T4-1Q").equals(Map.of(uuid, false)));
        assertThatThrownBy(() -> h.kubelet.allocate("nvidia.com/GRID_T4-1Q", List.of(uuid)))
                .hasMessageContaining("was mdev type nvidia-222 when advertised and is now mdev type nvidia-223");

        rescan();
        h.await(k -> ids(k).equals(Map.of("nvidia.com/GRID_T4-2Q", List.of(uuid)))
                && health(k, "nvidia.com/GRID_T4-2Q").equals(Map.of(uuid, true)));
    }

    @Test
    void scenario2ACardThatFillsUpKeepsItsResourcesWithoutNvml() {
        card("0000:1b:00.0", 3, 100);
        h.host.configureVf("0000:1b:00.4", 1153).configureVf("0000:1b:00.5", 1153);
        rescan();
        h.await(k -> ids(k).equals(Map.of(Q2, List.of("0000:1b:00.4", "0000:1b:00.5"))));
        int updates = h.kubelet.listUpdates(Q2);

        h.host.configureVf("0000:1b:00.6", 1153).rewriteCardCatalogs("0000:1b:00.0", Map.of());
        rescan();

        h.await(k -> ids(k).equals(Map.of(Q2, List.of("0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6"))));
        assertThat(h.manager.running()).extracting(ResourceName::fullName).containsExactly(Q2);
        // One update that adds the third VF: never an empty list in between.
        assertThat(h.kubelet.listUpdates(Q2)).isEqualTo(updates + 1);
    }

    @Test
    void scenario2OneNvmlErrorOnAFullCardChangesNothing() {
        card("0000:1b:00.0", 2, 100);
        h.host.configureVf("0000:1b:00.4", 1152).configureVf("0000:1b:00.5", 1155)
                .rewriteCardCatalogs("0000:1b:00.0", Map.of());
        AtomicInteger asked = new AtomicInteger();
        nvml.set(pf -> asked.incrementAndGet() == 2 ? VgpuTypeNames.failed("NVML_ERROR_GPU_IS_LOST")
                : VgpuTypeNames.of(L40S));
        rescan();
        h.await(k -> ids(k).equals(Map.of(Q1, List.of("0000:1b:00.4"), Q4, List.of("0000:1b:00.5"))));
        Map<String, Integer> updates = Map.of(Q1, h.kubelet.listUpdates(Q1), Q4, h.kubelet.listUpdates(Q4));

        rescan();
        rescan();

        assertThat(asked).hasValue(3);
        assertThat(h.manager.running()).extracting(ResourceName::fullName).containsExactly(Q1, Q4);
        assertThat(Map.of(Q1, h.kubelet.listUpdates(Q1), Q4, h.kubelet.listUpdates(Q4))).isEqualTo(updates);
    }

    @Test
    void scenario5TwoProfilesThatCutToOneNameAreNeverServedAsOneResource() {
        String stem = "NVIDIA " + "X".repeat(60);
        h.host.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(3, 100)
                .catalog(Map.of(1L, stem + "-1Q", 2L, stem + "-2Q", 1152L, "NVIDIA L40S-1Q")).create();
        h.host.configureVf("0000:1b:00.4", 1).configureVf("0000:1b:00.5", 2).configureVf("0000:1b:00.6", 1152);

        rescan();

        h.await(k -> ids(k).equals(Map.of(Q1, List.of("0000:1b:00.6"))));
        assertThat(h.manager.running()).extracting(ResourceName::fullName).containsExactly(Q1);
    }

    @Test
    void scenario6AHealthCheckThatHitsAnErrorKeepsItsSchedule() {
        // The re-check fails until the kubelet has seen its Unhealthy answer, then succeeds: the check must keep
        // running after the errors (its schedule survives them) to report the device Healthy again. Failing for a
        // fixed number of rounds instead would race the kubelet's first ListAndWatch on a loaded machine.
        java.util.concurrent.atomic.AtomicBoolean failing = new java.util.concurrent.atomic.AtomicBoolean(true);
        AtomicInteger errors = new AtomicInteger();
        DeviceSource flaky = new DeviceSource() {
            @Override
            public String name() {
                return "lab";
            }

            @Override
            public Discovery discover(Host host) {
                return Discovery.empty();
            }

            @Override
            public DeviceCheck recheck(Host host, Device device) {
                if (failing.get()) {
                    errors.incrementAndGet();
                    throw new NoClassDefFoundError("com/example/Missing");
                }
                return DeviceCheck.same();
            }
        };
        try (PluginManager manager = PluginManager.builder().hostRoot(h.host.root()).devicePluginDir(h.pluginDir)
                .healthPollInterval(java.time.Duration.ofMillis(50)).sources(List.of(flaky)).build()) {
            h.host.function("0000:65:00.0", 0x8086, 0x0b25).driver("vfio-pci").iommuGroup(65).create();
            h.host.addGroupNode(65);
            Device lab = Device.builder("0000:65:00.0", new ResourceName("LAB"), "lab", Attachment.VFIO_PCI)
                    .iommuGroup("65").build();
            Snapshot snapshot = Snapshot.builder().add("lab", new Discovery(List.of(lab), List.of())).build();
            manager.apply(snapshot, dev.vgpu.core.Reconciler.plan(Snapshot.empty(), snapshot));

            h.await(k -> health(k, "nvidia.com/LAB").equals(Map.of("0000:65:00.0", false)));
            failing.set(false);
            h.await(k -> health(k, "nvidia.com/LAB").equals(Map.of("0000:65:00.0", true)));
            assertThat(errors.get()).isPositive();
        }
    }

    @Test
    void guardedTasksLogAndKeepTheirScheduleButRethrowJvmErrors() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        java.util.concurrent.ScheduledExecutorService scheduler =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            scheduler.scheduleWithFixedDelay(Guarded.task("test task", () -> {
                if (runs.incrementAndGet() <= 2) {
                    throw new NoClassDefFoundError("com/example/Missing");
                }
            }), 0, 1, java.util.concurrent.TimeUnit.MILLISECONDS);
            org.awaitility.Awaitility.await().atMost(Harness.WAIT).until(() -> runs.get() >= 5);
        } finally {
            scheduler.shutdownNow();
        }
        assertThatThrownBy(() -> Guarded.task("fatal", () -> {
            throw new OutOfMemoryError("test");
        }).run()).isInstanceOf(OutOfMemoryError.class);
    }

    /**
     * Random sequences of configure, reconfigure, unconfigure, fill-card and NVML-flap events, each followed by a
     * rescan: after every step the kubelet lists each VF exactly under the profile it has now, and a VF whose type
     * did not change is never lost.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void randomEventSequencesNeverShowAWrongProfileAndNeverLoseAnUnchangedVf(long seed) {
        Random random = new Random(seed);
        card("0000:1b:00.0", 4, 100);
        card("0000:3b:00.0", 4, 200);
        List<String> vfs = List.of("0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6", "0000:1b:00.7",
                "0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7");
        List<Long> types = List.of(1152L, 1153L, 1155L);
        Map<String, Long> configured = new TreeMap<>();
        AtomicReference<VgpuTypeNames> nvmlAnswer = new AtomicReference<>(VgpuTypeNames.of(L40S));
        nvml.set(pf -> nvmlAnswer.get());
        for (int step = 0; step < 10; step++) {
            int event = random.nextInt(5);
            String vf = vfs.get(random.nextInt(vfs.size()));
            switch (event) {
                case 0, 1 -> {
                    long type = types.get(random.nextInt(types.size()));
                    h.host.configureVf(vf, type);
                    configured.put(vf, type);
                }
                case 2 -> {
                    h.host.unconfigureVf(vf);
                    configured.remove(vf);
                }
                case 3 -> h.host.rewriteCardCatalogs(vf.substring(0, 8) + "00.0", random.nextBoolean() ? Map.of() : L40S);
                default -> nvmlAnswer.set(random.nextBoolean() ? VgpuTypeNames.failed("NVML_ERROR_GPU_IS_LOST")
                        : VgpuTypeNames.of(L40S));
            }
            rescan();
            Map<String, List<String>> expected = new TreeMap<>();
            configured.forEach((id, type) -> expected.computeIfAbsent("nvidia.com/"
                    + ResourceName.forVgpuProfile(L40S.get(type)).orElseThrow().name(), r -> new java.util.ArrayList<>())
                    .add(id));
            // One wait for both: a check that read a VF's type file while the tree rewrote it saw it destroyed, and
            // that device stays unhealthy in the kubelet's list until the next check reads it whole.
            h.await(k -> ids(k).equals(expected) && health(k, Q1).values().stream().allMatch(Boolean::booleanValue));
        }
    }
}
