package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("reliability")
class ScannerAndRescanLoopTest {

    @TempDir
    Path root;

    /** A source whose next answer the test sets; an exception to throw takes precedence. */
    static final class ScriptedSource implements DeviceSource {
        final String name;
        final AtomicReference<List<String>> ids = new AtomicReference<>(List.of());
        final AtomicReference<RuntimeException> failure = new AtomicReference<>();

        ScriptedSource(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Discovery discover(Host host) throws IOException {
            RuntimeException e = failure.get();
            if (e != null) {
                throw e;
            }
            Discovery.Builder out = Discovery.builder();
            for (String spec : ids.get()) {
                String[] parts = spec.split("@");
                out.add(Device.builder(parts[0], ResourceName.sanitize(parts[1]).orElseThrow(), name,
                        Attachment.VFIO_PCI).iommuGroup(parts[0].substring(8, 10)).build());
            }
            return out.build();
        }
    }

    private Scanner scanner(DeviceSource... sources) {
        return new Scanner(root, PciIds.empty(), VgpuTypeResolver.none(), List.of(sources));
    }

    @Test
    void aFailingSourceKeepsItsPreviousDevicesWhileOthersMoveOn() {
        ScriptedSource vfio = new ScriptedSource("vendor-vfio");
        ScriptedSource pass = new ScriptedSource("passthrough");
        vfio.ids.set(List.of("0000:1b:00.4@P1", "0000:1b:00.5@P1"));
        pass.ids.set(List.of("0000:41:00.0@GPU"));
        Scanner scanner = scanner(pass, vfio);
        Snapshot first = scanner.scan(Snapshot.empty());

        vfio.failure.set(new IllegalStateException("sysfs went away"));
        pass.ids.set(List.of("0000:41:00.0@GPU", "0000:42:00.0@GPU"));
        Snapshot second = scanner.scan(first);

        assertThat(second.resource(ResourceName.sanitize("P1").orElseThrow()).orElseThrow().ids())
                .containsExactly("0000:1b:00.4", "0000:1b:00.5");
        assertThat(second.resource(ResourceName.sanitize("GPU").orElseThrow()).orElseThrow().ids())
                .containsExactly("0000:41:00.0", "0000:42:00.0");
    }

    @Test
    void eachScanAsksTheResolverAtMostOncePerGpuAndAgainInTheNextScan() {
        AtomicInteger calls = new AtomicInteger();
        VgpuTypeResolver counting = pf -> {
            calls.incrementAndGet();
            return VgpuTypeNames.of(Map.of(1L, "X"));
        };
        DeviceSource asksTwice = new DeviceSource() {
            @Override
            public String name() {
                return "asker";
            }

            @Override
            public Discovery discover(Host host) {
                host.vgpuTypes().supportedTypes(PciAddress.parse("0000:1b:00.0"));
                host.vgpuTypes().supportedTypes(PciAddress.parse("0000:1b:00.0"));
                host.vgpuTypes().supportedTypes(PciAddress.parse("0000:9b:00.0"));
                return Discovery.empty();
            }
        };
        Scanner scanner = new Scanner(root, PciIds.empty(), counting, List.of(asksTwice));
        scanner.scan(Snapshot.empty());
        assertThat(calls).hasValue(2);
        scanner.scan(Snapshot.empty());
        assertThat(calls).hasValue(4);
    }

    @Test
    void everyScanGivesTheSourcesTheHostsStateDirectoryPciIdsAndResolver() {
        List<Host> seen = new ArrayList<>();
        DeviceSource recorder = new DeviceSource() {
            @Override
            public String name() {
                return "recorder";
            }

            @Override
            public Discovery discover(Host host) {
                seen.add(host);
                return Discovery.empty();
            }
        };
        PciIds names = PciIds.empty();
        VgpuTypeResolver resolver = pf -> VgpuTypeNames.of(Map.of(1L, "X"));
        Host base = Host.of(root).withPciIds(names).withVgpuTypes(resolver)
                .withStateDirectory(StateDirectory.forReading(root.resolve("state")));
        Scanner scanner = new Scanner(base, List.of(recorder));

        scanner.scan(Snapshot.empty());
        scanner.scan(Snapshot.empty());

        assertThat(seen).hasSize(2).allSatisfy(host -> {
            assertThat(host.root()).isEqualTo(root);
            assertThat(host.pciIds()).isSameAs(names);
            assertThat(host.stateDirectory()).contains(StateDirectory.forReading(root.resolve("state")));
            assertThat(host.vgpuTypes().supportedTypes(PciAddress.parse("0000:1b:00.0")))
                    .isEqualTo(VgpuTypeNames.of(Map.of(1L, "X")));
        });
        assertThat(seen.get(0).scanScope()).isNotSameAs(seen.get(1).scanScope());
        assertThat(new Scanner(root, names, resolver, List.of(recorder)).run(Snapshot.empty()).failures()).isEmpty();
        assertThat(seen.get(2).stateDirectory()).isEmpty();
    }

    @Test
    void sourcesShareOneScanScopePerScanAndNeverAcrossScans() {
        AtomicInteger computed = new AtomicInteger();
        record Key(String name) {
        }
        DeviceSource[] sharers = new DeviceSource[2];
        for (int i = 0; i < 2; i++) {
            String name = "sharer-" + i;
            sharers[i] = new DeviceSource() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public Discovery discover(Host host) {
                    host.scanScope().computeIfAbsent(new Key("driver of 0000:1b:00.4"), k -> computed.incrementAndGet());
                    return Discovery.empty();
                }
            };
        }
        Scanner scanner = scanner(sharers);
        scanner.scan(Snapshot.empty());
        assertThat(computed).hasValue(1);
        scanner.scan(Snapshot.empty());
        assertThat(computed).hasValue(2);
    }

    @Test
    void rescanDeliversOnlyRealChangesAndSnapshotFirst() {
        ScriptedSource vfio = new ScriptedSource("vendor-vfio");
        vfio.ids.set(List.of("0000:1b:00.4@P1"));
        Scanner scanner = scanner(vfio);
        Snapshot first = scanner.scan(Snapshot.empty());
        List<Plan> plans = new ArrayList<>();
        List<Snapshot> snapshots = new ArrayList<>();
        try (RescanLoop loop = new RescanLoop(scanner, (next, plan) -> {
            snapshots.add(next);
            plans.add(plan);
        }, Duration.ofSeconds(5), first)) {
            loop.runNow();
            assertThat(plans).isEmpty();

            vfio.ids.set(List.of("0000:1b:00.4@P1", "0000:1b:00.5@P1", "0000:1b:00.6@P2"));
            loop.runNow();
            assertThat(plans).hasSize(1);
            assertThat(plans.get(0).changes()).extracting(c -> c.getClass().getSimpleName())
                    .containsExactly("Update", "Add");
            assertThat(snapshots.get(0).deviceCount()).isEqualTo(3);

            vfio.failure.set(new IllegalStateException("boom"));
            loop.runNow();
            assertThat(plans).hasSize(1);

            vfio.failure.set(null);
            vfio.ids.set(List.of());
            loop.runNow();
            assertThat(plans.get(1).changes()).extracting(c -> c.getClass().getSimpleName())
                    .containsExactly("Remove", "Remove");
        }
    }

    @Test
    void aSinkThatThrowsDoesNotStopTheLoop() {
        ScriptedSource vfio = new ScriptedSource("vendor-vfio");
        Scanner scanner = scanner(vfio);
        AtomicInteger calls = new AtomicInteger();
        try (RescanLoop loop = new RescanLoop(scanner, (next, plan) -> {
            calls.incrementAndGet();
            throw new IllegalStateException("plugin start failed");
        }, Duration.ofSeconds(5), Snapshot.empty())) {
            vfio.ids.set(List.of("0000:1b:00.4@P1"));
            loop.runNow();
            loop.runNow();
            // The failed round did not advance the current snapshot, so the change is offered again.
            assertThat(calls).hasValue(2);
        }
    }

    @Test
    void aSinkThatThrowsAnErrorKeepsThePeriodicScheduleAlive() {
        ScriptedSource vfio = new ScriptedSource("vendor-vfio");
        Scanner scanner = scanner(vfio);
        AtomicInteger calls = new AtomicInteger();
        try (RescanLoop loop = new RescanLoop(scanner, (next, plan) -> {
            if (calls.incrementAndGet() <= 2) {
                throw new NoClassDefFoundError("com/google/common/util/concurrent/internal/InternalFutureFailureAccess");
            }
        }, Duration.ofMillis(1), Snapshot.empty())) {
            vfio.ids.set(List.of("0000:1b:00.4@P1"));
            loop.start();
            // Each failed round offers the change again; the third round goes through on the same schedule.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> calls.get() >= 3);
        }
    }

    @Test
    void theObserverHearsEveryRoundWithTheSourcesThatFailed() {
        ScriptedSource vfio = new ScriptedSource("vendor-vfio");
        ScriptedSource pass = new ScriptedSource("passthrough");
        List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        ScanObserver observer = new ScanObserver() {
            @Override
            public void scanned(Duration took, Scanner.Result result) {
                heard.add("scanned " + result.failures().keySet() + " " + result.snapshot().deviceCount());
            }

            @Override
            public void roundFailed(Duration took, Throwable error) {
                heard.add("failed " + error.getMessage());
            }
        };
        AtomicInteger applies = new AtomicInteger();
        try (RescanLoop loop = new RescanLoop(scanner(pass, vfio), (next, plan) -> {
            if (applies.incrementAndGet() == 1) {
                throw new IllegalStateException("sink down");
            }
        }, Duration.ofSeconds(5), Snapshot.empty(), observer)) {
            vfio.ids.set(List.of("0000:1b:00.4@P1"));
            loop.runNow();
            pass.failure.set(new IllegalStateException("sysfs went away"));
            loop.runNow();
        }
        assertThat(heard).containsExactly("failed sink down", "scanned [passthrough] 1");
    }

    @Test
    void requestsRunARoundWithPeriodicRescansOffAndFoldIntoOneWhileOneWaits() throws Exception {
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger scans = new AtomicInteger();
        DeviceSource slow = new DeviceSource() {
            @Override
            public String name() {
                return "slow";
            }

            @Override
            public Discovery discover(Host host) {
                if (scans.incrementAndGet() == 1) {
                    entered.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return Discovery.empty();
            }
        };
        try (RescanLoop loop = new RescanLoop(scanner(slow), (next, plan) -> { }, Duration.ofHours(1),
                Snapshot.empty())) {
            assertThat(loop.runningFor()).isEmpty();
            assertThat(loop.requestRescan()).isTrue();
            entered.await();
            assertThat(loop.runningFor()).isPresent();
            // While the first round runs: one more round is queued, every later request folds into it.
            assertThat(loop.requestRescan()).isTrue();
            for (int i = 0; i < 5; i++) {
                assertThat(loop.requestRescan()).isFalse();
            }
            release.countDown();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> scans.get() == 2
                    && loop.runningFor().isEmpty());
            loop.runNow();
            assertThat(scans).hasValue(3);
        }
    }

    @Test
    void roundsThatOverrunThePeriodNeverOverlapAndTheScheduleGoesOn() {
        AtomicInteger active = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger scans = new AtomicInteger();
        DeviceSource slow = new DeviceSource() {
            @Override
            public String name() {
                return "slow";
            }

            @Override
            public Discovery discover(Host host) {
                mostAtOnce.accumulateAndGet(active.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(5); // five times the period below
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                active.decrementAndGet();
                scans.incrementAndGet();
                return Discovery.empty();
            }
        };
        try (RescanLoop loop = new RescanLoop(scanner(slow), (next, plan) -> { }, Duration.ofMillis(1),
                Snapshot.empty())) {
            loop.start();
            for (int i = 0; i < 5; i++) {
                loop.requestRescan();
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> scans.get() >= 10);
        }
        assertThat(mostAtOnce).hasValue(1);
    }
}
