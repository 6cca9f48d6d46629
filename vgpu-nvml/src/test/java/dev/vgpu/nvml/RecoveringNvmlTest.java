package dev.vgpu.nvml;

import static dev.vgpu.nvml.NvmlStub.DRIVER_NOT_LOADED;
import static dev.vgpu.nvml.NvmlStub.GPU0;
import static dev.vgpu.nvml.NvmlStub.GPU1;
import static dev.vgpu.nvml.NvmlStub.GPU_IS_LOST;
import static dev.vgpu.nvml.NvmlStub.calls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.testsupport.CapturedStderr;
import dev.vgpu.testsupport.RecordingThreads;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NVML that fails to load or initialize at start comes up on a later retry, through the stub's real JNA path. */
class RecoveringNvmlTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** The threads of each test's NVML owner come from these, so the test asks about its own threads only. */
    private final RecordingThreads retries = new RecordingThreads(RecoveringNvml.RETRY_THREAD_NAME);
    private final RecordingThreads watchers = new RecordingThreads(XidWatcher.THREAD_NAME);
    private final XidWatcher.Options fast = XidWatcher.Options.defaults().withWaitTimeout(Duration.ofMillis(50))
            .withThreads(watchers);
    private static final VgpuTypeNames CARD0 = VgpuTypeNames.of(Map.of(1414L, "NVIDIA H200X-1-18C",
            1428L, "NVIDIA H200X-141C"));

    private final NvmlStub.Control stub = NvmlStub.control();
    private final List<Xid> xids = new CopyOnWriteArrayList<>();
    private final XidListener recorder = (gpu, xid) -> xids.add(new Xid(gpu, xid));

    record Xid(PciAddress gpu, long xid) {
    }

    @BeforeEach
    void reset() {
        stub.stub_reset();
        System.clearProperty(Nvml.LIBRARY_PROPERTY);
    }

    @AfterEach
    void nothingLeft() {
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(retries.aliveNames()).as("retry threads left alive")
                .isEmpty());
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(watchers.aliveNames()).as("watchers left alive")
                .isEmpty());
        assertThat(stub.stub_init_refcount()).as("NVML initializations not shut down").isZero();
        assertThat(stub.stub_live_event_sets()).as("event sets left").isZero();
        NvmlStub.assertNoMisuse(stub);
    }

    @Test
    void initFailingAtStartComesUpOnRetryThenNamesResolveAndXidsFlow() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);

        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            VgpuTypeResolver resolver = nvml.vgpuTypeResolver();
            nvml.watchXids(fast, recorder);

            assertThat(nvml.available()).isFalse();
            assertThat(nvml.description())
                    .startsWith("NVML not in use: NVML_ERROR_DRIVER_NOT_LOADED from nvmlInit_v2() of " + NvmlStub.library());
            assertThat(resolver.supportedTypes(GPU0)).isEqualTo(VgpuTypeNames.unavailable(nvml.description()));
            assertThat(nvml.xidWatcher()).isEmpty();
            assertThat(nvml.retry()).as("the driver is still loading").isFalse();
            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(2);

            stub.stub_set_init_result(0);

            assertThat(nvml.retry()).isTrue();
            assertThat(nvml.available()).isTrue();
            assertThat(nvml.description()).isEqualTo("NVML in use: " + NvmlStub.library() + ", 4 GPUs");
            assertThat(resolver.supportedTypes(GPU0)).as("the resolver handed out before NVML came up").isEqualTo(CARD0);
            assertThat(nvml.xidWatcher().orElseThrow().running()).isTrue();
            await().atMost(PATIENCE).until(() -> !xids.isEmpty());
            assertThat(xids).containsExactly(new Xid(GPU1, 79));

            assertThat(nvml.retry()).isTrue();
            assertThat(calls(stub, "nvmlInit_v2")).as("no init once NVML is up").isEqualTo(3);
            assertThat(stub.stub_init_refcount()).isEqualTo(1);
        }
        assertThat(calls(stub, "nvmlShutdown")).isEqualTo(1);
    }

    @Test
    void nvmlUpAtStartIsNeverInitializedAgainAndStartsNoRetryThread() {
        AtomicInteger recoveries = new AtomicInteger();

        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            nvml.onRecovery(recoveries::incrementAndGet);
            nvml.retryEvery(Duration.ofMillis(1), retries);
            assertThat(retries.made()).as("retry threads made").isZero();
            for (int i = 0; i < 5; i++) {
                assertThat(nvml.retry()).isTrue();
            }
            nvml.watchXids(fast, recorder);
            await().atMost(PATIENCE).until(() -> !xids.isEmpty());
            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(1);
        }
        assertThat(recoveries).hasValue(0);
        assertThat(calls(stub, "nvmlShutdown")).isEqualTo(1);
    }

    // The two tests below put the library at a path of their own as a symbolic link to the build's stub: the
    // dynamic linker then maps the stub already loaded (same file), whose controls the tests hold. A copy would
    // be a second library with the same soname, which a later dlopen("libnvidia-ml.so.1") could pick.

    @Test
    void aLibraryFileThatAppearsLaterIsLoadedOnTheNextRetry(@TempDir Path dir) throws IOException {
        Path library = dir.resolve("host-driver-lib/libnvidia-ml.so.1");

        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(library))) {
            assertThat(nvml.description())
                    .isEqualTo("NVML not in use: NVML_ERROR_LIBRARY_NOT_FOUND from dlopen(" + library + "): no such file");
            assertThat(nvml.retry()).isFalse();
            assertThat(calls(stub, "nvmlInit_v2")).isZero();

            Files.createDirectories(library.getParent());
            Files.createSymbolicLink(library, NvmlStub.library());

            assertThat(nvml.retry()).isTrue();
            assertThat(nvml.description()).isEqualTo("NVML in use: " + library + ", 4 GPUs");
            assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0)).isEqualTo(CARD0);
            assertThat(stub.stub_init_refcount()).isEqualTo(1);
        }
        assertThat(calls(stub, "nvmlShutdown")).isEqualTo(1);
    }

    @Test
    void aLibraryThatLoadedButFailedToInitializeIsInitializedAgainWithoutLoadingItAgain(@TempDir Path dir)
            throws IOException {
        Path library = Files.createSymbolicLink(dir.resolve("libnvidia-ml.so.1"), NvmlStub.library());
        stub.stub_set_init_result(DRIVER_NOT_LOADED);

        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(library))) {
            assertThat(nvml.available()).isFalse();
            // loading the file again would fail now ("no such file"); the library already loaded is reused
            Files.delete(library);
            stub.stub_set_init_result(0);

            assertThat(nvml.retry()).isTrue();
            assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0)).isEqualTo(CARD0);
            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(2);
        }
    }

    @Test
    void retryEveryBringsNvmlUpWithoutAScanThenItsThreadEnds() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        AtomicInteger recoveries = new AtomicInteger();
        List<Thread> recoveryThreads = new CopyOnWriteArrayList<>();

        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            nvml.watchXids(fast, recorder);
            nvml.onRecovery(() -> {
                recoveryThreads.add(Thread.currentThread());
                recoveries.incrementAndGet();
            });
            nvml.retryEvery(Duration.ofMillis(20), retries);
            assertThat(retries.alive()).isEqualTo(1);
            await().atMost(PATIENCE).until(() -> calls(stub, "nvmlInit_v2") >= 4);
            assertThat(nvml.available()).isFalse();

            stub.stub_set_init_result(0);

            await().atMost(PATIENCE).until(nvml::available);
            await().atMost(PATIENCE).until(() -> retries.alive() == 0);
            await().atMost(PATIENCE).until(() -> !xids.isEmpty());
            assertThat(xids).containsExactly(new Xid(GPU1, 79));
            assertThat(recoveries).hasValue(1);
            assertThat(recoveryThreads).as("the retry thread").containsExactly(retries.last());
            assertThat(retries.made()).isEqualTo(1);
            assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0)).isEqualTo(CARD0);
            assertThatThrownBy(() -> nvml.retryEvery(Duration.ofMillis(20), retries)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void theRetryThreadWaitsBetweenAttemptsAndCloseEndsItAtOnce() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()));
        nvml.retryEvery(Duration.ofMinutes(1), retries);
        Thread thread = retries.last();

        await().atMost(PATIENCE).until(() -> thread.getState() == Thread.State.TIMED_WAITING);
        assertThat(calls(stub, "nvmlInit_v2")).as("the attempt at open only: no spinning").isEqualTo(1);

        nvml.close();

        assertThat(thread.isAlive()).isFalse();
        assertThat(nvml.retry()).isFalse();
        assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(1);
    }

    @Test
    void noNvmlNeverLoadsNorRetriesNorWatches() {
        AtomicInteger recoveries = new AtomicInteger();

        try (RecoveringNvml nvml = RecoveringNvml.disabled("disabled by --no-nvml")) {
            nvml.onRecovery(recoveries::incrementAndGet);
            nvml.retryEvery(Duration.ofMillis(1), retries);
            nvml.watchXids(fast, recorder);
            for (int i = 0; i < 3; i++) {
                assertThat(nvml.retry()).isFalse();
            }

            assertThat(retries.made()).as("retry threads made").isZero();
            assertThat(nvml.available()).isFalse();
            assertThat(nvml.description()).isEqualTo("NVML not in use: disabled by --no-nvml");
            assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0))
                    .isEqualTo(VgpuTypeNames.unavailable("NVML not in use: disabled by --no-nvml"));
            assertThat(nvml.xidWatcher().orElseThrow().running()).isFalse();
        }
        assertThat(calls(stub, "nvmlInit_v2")).isZero();
        assertThat(recoveries).hasValue(0);
    }

    @Test
    void oneLogLinePerStateChangeNotOnePerRetry() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);

        String log = CapturedStderr.of(() -> {
            try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
                for (int i = 0; i < 3; i++) {
                    nvml.retry();
                }
                stub.stub_set_init_result(0);
                for (int i = 0; i < 3; i++) {
                    nvml.retry();
                }
            }
        });

        assertThat(log.lines().filter(line -> line.contains("RecoveringNvml")).toList()).satisfiesExactly(
                first -> assertThat(first).contains("INFO RecoveringNvml - NVML not in use: "
                        + "NVML_ERROR_DRIVER_NOT_LOADED from nvmlInit_v2() of ").endsWith("; retried while it is down"),
                up -> assertThat(up).endsWith("INFO RecoveringNvml - NVML in use: " + NvmlStub.library()
                        + ", 4 GPUs (up on retry 4)"));
    }

    @Test
    void nvmlUpAtStartLogsOneLineAndRetriesLogNothing() {
        String log = CapturedStderr.of(() -> {
            try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
                for (int i = 0; i < 3; i++) {
                    nvml.retry();
                }
            }
        });

        assertThat(log.lines().filter(line -> line.contains("RecoveringNvml")).toList()).singleElement().asString()
                .endsWith("INFO RecoveringNvml - NVML in use: " + NvmlStub.library() + ", 4 GPUs");
    }

    @Test
    void concurrentRetriesInitializeNvmlOnce() throws Exception {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            nvml.watchXids(fast, recorder);
            stub.stub_set_init_result(0);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> retries = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                retries.add(pool.submit(() -> {
                    go.await();
                    return nvml.retry();
                }));
            }
            go.countDown();
            for (Future<Boolean> retry : retries) {
                assertThat(retry.get(60, TimeUnit.SECONDS)).isTrue();
            }

            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(2);
            assertThat(stub.stub_init_refcount()).isEqualTo(1);
            assertThat(watchers.made()).as("watchers started").isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void gpuLostOnceIsAFailedAnswerForThatScanOnly() {
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            stub.stub_fail_bus_id_lookups(0, GPU_IS_LOST, 1);

            VgpuTypeResolver firstScan = VgpuTypeResolver.memoizing(nvml.vgpuTypeResolver());
            VgpuTypeNames lost = firstScan.supportedTypes(GPU0);
            assertThat(lost).isInstanceOfSatisfying(VgpuTypeNames.Failed.class, failed -> assertThat(failed.reason())
                    .startsWith("NVML_ERROR_GPU_IS_LOST from nvmlDeviceGetHandleByPciBusId_v2(0000:41:00.0): GPU is lost"));
            assertThat(firstScan.supportedTypes(GPU0)).as("memoized within the scan").isEqualTo(lost);
            assertThat(firstScan.supportedTypes(GPU1)).as("another card is not affected")
                    .isInstanceOf(VgpuTypeNames.Answered.class);

            assertThat(nvml.retry()).as("one card's error does not take NVML down").isTrue();
            VgpuTypeResolver secondScan = VgpuTypeResolver.memoizing(nvml.vgpuTypeResolver());
            assertThat(secondScan.supportedTypes(GPU0)).isEqualTo(CARD0);
            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(1);
        }
    }

    @Test
    void checkGpuSaysWhetherNvmlAnswersForTheGpuNowAndWhyNot() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            assertThat(nvml.checkGpu(GPU0)).hasValueSatisfying(why -> assertThat(why).startsWith("NVML not in use: "
                    + "NVML_ERROR_DRIVER_NOT_LOADED"));
            stub.stub_set_init_result(0);
            assertThat(nvml.retry()).isTrue();

            assertThat(nvml.checkGpu(GPU0)).isEmpty();
            stub.stub_fail_bus_id_lookups(0, GPU_IS_LOST, 2);
            assertThat(nvml.checkGpu(GPU0)).hasValueSatisfying(why -> assertThat(why).startsWith(
                    "NVML_ERROR_GPU_IS_LOST from nvmlDeviceGetHandleByPciBusId_v2(0000:41:00.0)"));
            assertThat(nvml.checkGpu(GPU1)).as("another GPU still answers").isEmpty();
            assertThat(nvml.checkGpu(GPU0)).as("lost twice").isPresent();
            assertThat(nvml.checkGpu(GPU0)).as("answers again").isEmpty();
            assertThat(nvml.checkGpu(PciAddress.parse("0000:99:00.0"))).hasValueSatisfying(why -> assertThat(why)
                    .startsWith("NVML_ERROR_NOT_FOUND"));
        }
    }

    /**
     * The first attempt handed to an executor (here the test's own list: it runs when the test says, on the test
     * thread) does nothing until run; meanwhile NVML counts as down without a native call, and what was asked for
     * meanwhile (XIDs, a recovery action) starts when the attempt brings NVML up, as after a successful retry.
     */
    @Test
    void aFirstAttemptInTheBackgroundCallsNothingUntilItRunsThenNvmlIsUpAsOpenWouldLeaveIt() {
        List<Runnable> tasks = new ArrayList<>();
        AtomicInteger recoveries = new AtomicInteger();

        try (RecoveringNvml nvml = RecoveringNvml.openInBackground(Optional.of(NvmlStub.library()), tasks::add)) {
            assertThat(tasks).hasSize(1);
            assertThat(nvml.available()).isFalse();
            assertThat(nvml.description()).isEqualTo("NVML not in use: " + RecoveringNvml.BEING_LOADED);
            assertThat(nvml.retry()).as("nothing to add to the attempt under way").isFalse();
            assertThat(nvml.checkGpu(GPU0)).contains("NVML not in use: " + RecoveringNvml.BEING_LOADED);
            nvml.watchXids(fast, recorder);
            nvml.onRecovery(recoveries::incrementAndGet);
            assertThat(calls(stub, "nvmlInit_v2")).as("no native call before the attempt runs").isZero();

            tasks.get(0).run();

            nvml.awaitFirstAttempt();
            assertThat(nvml.available()).isTrue();
            assertThat(nvml.description()).isEqualTo("NVML in use: " + NvmlStub.library() + ", 4 GPUs");
            assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0)).isEqualTo(CARD0);
            assertThat(nvml.xidWatcher().orElseThrow().running()).isTrue();
            await().atMost(PATIENCE).until(() -> !xids.isEmpty());
            assertThat(recoveries).hasValue(1);
            assertThat(nvml.retry()).isTrue();
            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(1);
        }
        assertThat(calls(stub, "nvmlShutdown")).isEqualTo(1);
    }

    /** A first attempt in the background that fails leaves NVML down and retried, as {@code open} would. */
    @Test
    void aFailedFirstAttemptInTheBackgroundIsRetriedLikeAFailedOpen() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        List<Runnable> tasks = new ArrayList<>();
        try (RecoveringNvml nvml = RecoveringNvml.openInBackground(Optional.of(NvmlStub.library()), tasks::add)) {
            tasks.get(0).run();
            assertThat(nvml.available()).isFalse();
            assertThat(nvml.description()).startsWith("NVML not in use: NVML_ERROR_DRIVER_NOT_LOADED");
            assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0))
                    .isEqualTo(VgpuTypeNames.unavailable(nvml.description()));
            stub.stub_set_init_result(0);
            assertThat(nvml.retry()).isTrue();
            assertThat(calls(stub, "nvmlInit_v2")).isEqualTo(2);
        }
    }

    /**
     * The resolver waits for the first attempt: a name asked for during the first scan is NVML's, never "being
     * loaded". The asking thread must be seen waiting before the attempt runs; a resolver that did not wait would
     * have answered already, which {@code isNotDone} below refuses.
     */
    @Test
    void theResolverWaitsForTheFirstAttemptInTheBackground() throws Exception {
        List<Runnable> tasks = new CopyOnWriteArrayList<>();
        ExecutorService asker = Executors.newSingleThreadExecutor();
        try (RecoveringNvml nvml = RecoveringNvml.openInBackground(Optional.of(NvmlStub.library()), tasks::add)) {
            // The asker thread owns nothing but this one call; the test thread runs the attempt.
            AtomicReference<Thread> askerThread = new AtomicReference<>();
            Future<VgpuTypeNames> names = asker.submit(() -> {
                askerThread.set(Thread.currentThread());
                return nvml.vgpuTypeResolver().supportedTypes(GPU0);
            });
            // Parked on the first attempt's latch, not idle in the executor (which parks on its queue).
            await().atMost(PATIENCE).until(() -> askerThread.get() != null
                    && askerThread.get().getState() == Thread.State.WAITING
                    && String.valueOf(LockSupport.getBlocker(askerThread.get())).contains("CountDownLatch"));
            assertThat(names).isNotDone();

            tasks.get(0).run();

            assertThat(names.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(CARD0);
        } finally {
            asker.shutdownNow();
        }
    }

    /** Closed before its first attempt ran: the attempt never loads NVML, and nobody waits for it. */
    @Test
    void closedBeforeTheFirstAttemptRanNvmlIsNeverLoaded() {
        List<Runnable> tasks = new ArrayList<>();
        RecoveringNvml nvml = RecoveringNvml.openInBackground(Optional.of(NvmlStub.library()), tasks::add);
        nvml.close();

        tasks.get(0).run();

        nvml.awaitFirstAttempt();
        assertThat(nvml.available()).isFalse();
        assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0)).isInstanceOf(VgpuTypeNames.Unavailable.class);
        assertThat(calls(stub, "nvmlInit_v2")).isZero();
    }

    @Test
    void ignoreXidsAppliesToTheRunningWatcherAndToOneStartedLater() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        stub.stub_clear_events();
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            nvml.ignoreXids(java.util.Set.of(79L)); // not watched yet: nothing to change
            nvml.watchXids(fast, recorder);
            nvml.ignoreXids(java.util.Set.of(79L)); // before NVML is up: the watcher starts with it
            stub.stub_set_init_result(0);
            assertThat(nvml.retry()).isTrue();
            stub.stub_queue_event(0, NvmlStub.XID, 79);
            stub.stub_queue_event(0, NvmlStub.XID, 43);
            await().atMost(PATIENCE).until(() -> !xids.isEmpty());
            assertThat(xids).containsExactly(new Xid(GPU0, 43));

            nvml.ignoreXids(java.util.Set.of(43L));
            stub.stub_queue_event(0, NvmlStub.XID, 43);
            stub.stub_queue_event(0, NvmlStub.XID, 79);
            await().atMost(PATIENCE).until(() -> xids.size() == 2);
            assertThat(xids).containsExactly(new Xid(GPU0, 43), new Xid(GPU0, 79));
        }
    }

    @Test
    void closeEndsEverythingAndLaterCallsDoNothing() {
        stub.stub_set_init_result(DRIVER_NOT_LOADED);
        RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()));
        nvml.watchXids(fast, recorder);
        stub.stub_set_init_result(0);
        assertThat(nvml.retry()).isTrue();
        Thread watcher = watchers.last();

        nvml.close();
        nvml.close();

        assertThat(watcher.isAlive()).isFalse();
        assertThat(nvml.available()).isFalse();
        assertThat(nvml.retry()).isFalse();
        assertThat(nvml.vgpuTypeResolver().supportedTypes(GPU0)).isInstanceOfSatisfying(VgpuTypeNames.Unavailable.class,
                unavailable -> assertThat(unavailable.reason()).contains("closed"));
        nvml.retryEvery(Duration.ofMillis(1), retries);
        assertThat(retries.made()).as("retry threads made").isZero();
        assertThat(calls(stub, "nvmlShutdown")).isEqualTo(1);
    }

    @Test
    void aLibraryNameThatCannotBeUsedIsNotRetried() {
        System.setProperty(Nvml.LIBRARY_PROPERTY, "/lib\0/libnvidia-ml.so.1");
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.empty())) {
            nvml.retryEvery(Duration.ofMillis(1), retries);

            assertThat(nvml.retry()).isFalse();
            assertThat(retries.made()).as("retry threads made").isZero();
            assertThat(nvml.description()).startsWith("NVML not in use: NVML_ERROR_LIBRARY_NOT_FOUND from Nvml.open: ");
        } finally {
            System.clearProperty(Nvml.LIBRARY_PROPERTY);
        }
        assertThat(calls(stub, "nvmlInit_v2")).isZero();
    }

    @Test
    void retryPeriodMustBePositive() {
        try (RecoveringNvml nvml = RecoveringNvml.disabled("test")) {
            assertThatThrownBy(() -> nvml.retryEvery(Duration.ZERO, retries)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least 1ms");
        }
    }
}
