package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The two hooks the daemon's NVML recovery uses: a task before each scan, and a round requested without waiting. */
class RescanLoopHooksTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private final List<String> events = new CopyOnWriteArrayList<>();

    /** Finds nothing and records each discovery, with the thread it ran on. */
    private final class RecordingSource implements DeviceSource {
        @Override
        public String name() {
            return "vendor-vfio";
        }

        @Override
        public Discovery discover(Host host) {
            events.add("scan on " + Thread.currentThread().getName());
            return Discovery.builder().build();
        }
    }

    private Scanner scanner() {
        return new Scanner(root, PciIds.empty(), VgpuTypeResolver.none(), List.of(new RecordingSource()));
    }

    @Test
    void beforeScanRunsOnTheRescanThreadBeforeEveryScan() {
        Runnable beforeScan = () -> events.add("retry on " + Thread.currentThread().getName());

        try (RescanLoop loop = new RescanLoop(scanner(), (next, plan) -> { }, Duration.ofSeconds(5), Snapshot.empty(),
                ScanObserver.NONE, beforeScan)) {
            loop.runNow();
            loop.runNow();
        }

        assertThat(events).containsExactly("retry on vgpu-rescan", "scan on vgpu-rescan",
                "retry on vgpu-rescan", "scan on vgpu-rescan");
    }

    @Test
    void aBeforeScanThatThrowsFailsThatRoundOnlyAndTheLoopCarriesOn() {
        AtomicBoolean fail = new AtomicBoolean(true);
        Runnable beforeScan = () -> {
            if (fail.getAndSet(false)) {
                throw new IllegalStateException("retry broke");
            }
        };

        try (RescanLoop loop = new RescanLoop(scanner(), (next, plan) -> { }, Duration.ofSeconds(5), Snapshot.empty(),
                ScanObserver.NONE, beforeScan)) {
            loop.runNow();
            assertThat(events).isEmpty();
            loop.runNow();
        }

        assertThat(events).containsExactly("scan on vgpu-rescan");
    }

    @Test
    void requestRescanQueuesARoundWithoutWaitingAndDoesNothingAfterClose() {
        RescanLoop loop = new RescanLoop(scanner(), (next, plan) -> { }, Duration.ofSeconds(5), Snapshot.empty());
        try {
            loop.requestRescan();
            await().atMost(PATIENCE).until(() -> events.size() == 1);
            assertThat(events).containsExactly("scan on vgpu-rescan");
        } finally {
            loop.close();
        }

        loop.requestRescan();

        assertThat(events).hasSize(1);
    }
}
