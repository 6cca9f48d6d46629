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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hooks an owner of the loop uses: a task before each scan, a round requested without waiting, the scheduler
 * its rounds run on and the ticker they are timed by; and the period, a fixed rate (start to start).
 */
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

    @Test
    void aGivenSchedulerRunsTheRoundsAndOutlivesTheLoop() throws Exception {
        ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "owner-thread"));
        try {
            RescanLoop loop = RescanLoop.builder(scanner(), (next, plan) -> { }).scheduler(owner).build();
            loop.runNow();
            loop.requestRescan();
            await().atMost(PATIENCE).until(() -> events.size() == 2);
            loop.start();
            loop.close();

            assertThat(events).containsOnly("scan on owner-thread");
            assertThat(owner.isShutdown()).as("the owner stops its scheduler").isFalse();
            assertThat(owner.submit(() -> "still serving").get(30, TimeUnit.SECONDS)).isEqualTo("still serving");
            loop.requestRescan();
            assertThat(owner.submit(() -> events.size()).get(30, TimeUnit.SECONDS)).as("nothing after close").isEqualTo(2);
        } finally {
            owner.shutdownNow();
        }
    }

    /** Keeps what the loop schedules instead of running it, so the test runs each round itself. */
    private static final class HandScheduler extends ScheduledThreadPoolExecutor {
        final List<Long> delays = new CopyOnWriteArrayList<>();
        final List<Runnable> tasks = new CopyOnWriteArrayList<>();

        HandScheduler() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
            delays.add(unit.toSeconds(delay));
            tasks.add(task);
            return super.schedule(() -> { }, 1, TimeUnit.DAYS);
        }
    }

    @Test
    void thePeriodIsAFixedRateFromStartToStartWithoutCatchUpRoundsAndTheTickerTimesIt() {
        AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
        AtomicLong scanTakes = new AtomicLong();
        List<Duration> runningDuringTheScan = new CopyOnWriteArrayList<>();
        HandScheduler hand = new HandScheduler();
        RescanLoop[] loop = new RescanLoop[1];
        DeviceSource slow = new DeviceSource() {
            @Override
            public String name() {
                return "slow";
            }

            @Override
            public Discovery discover(Host host) {
                now.addAndGet(scanTakes.get());
                runningDuringTheScan.add(loop[0].runningFor().orElseThrow());
                return Discovery.builder().build();
            }
        };
        try {
            loop[0] = RescanLoop.builder(new Scanner(root, PciIds.empty(), VgpuTypeResolver.none(), List.of(slow)),
                    (next, plan) -> { }).period(Duration.ofSeconds(10)).scheduler(hand).ticker(now::get).build();
            loop[0].start();
            assertThat(hand.delays).containsExactly(10L);

            now.addAndGet(TimeUnit.SECONDS.toNanos(10));
            scanTakes.set(TimeUnit.SECONDS.toNanos(3));
            hand.tasks.get(0).run();
            now.addAndGet(TimeUnit.SECONDS.toNanos(7));
            scanTakes.set(TimeUnit.SECONDS.toNanos(25));
            hand.tasks.get(1).run();
            scanTakes.set(0);
            hand.tasks.get(2).run();

            // 3 s into a 10 s slot: 7 s to the next start; 25 s overran two slots: at once, with no catch-up burst
            assertThat(hand.delays).containsExactly(10L, 7L, 0L, 10L);
            assertThat(runningDuringTheScan).containsExactly(Duration.ofSeconds(3), Duration.ofSeconds(25),
                    Duration.ZERO);
            assertThat(loop[0].runningFor()).isEmpty();
        } finally {
            loop[0].close();
            hand.shutdownNow();
        }
    }
}
