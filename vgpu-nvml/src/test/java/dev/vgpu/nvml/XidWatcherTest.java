package dev.vgpu.nvml;

import static dev.vgpu.nvml.NvmlStub.GPU0;
import static dev.vgpu.nvml.NvmlStub.GPU1;
import static dev.vgpu.nvml.NvmlStub.GPU2_MANY_TYPES;
import static dev.vgpu.nvml.NvmlStub.GPU3_NO_VGPU;
import static dev.vgpu.nvml.NvmlStub.XID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.PciAddress;
import dev.vgpu.testsupport.RecordingThreads;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Critical XIDs from the stub's event set reach the listener, filtered, on one thread that stops promptly. */
class XidWatcherTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final long SENTINEL_XID = 999;
    /** Every watcher thread of a test comes from here, so the test asks about its own threads only. */
    private final RecordingThreads threads = new RecordingThreads(XidWatcher.THREAD_NAME);
    private final XidWatcher.Options fast = XidWatcher.Options.defaults().withWaitTimeout(Duration.ofMillis(50))
            .withThreads(threads);

    private final NvmlStub.Control stub = NvmlStub.control();
    private final Recorder recorder = new Recorder();
    private Nvml nvml;

    record Xid(PciAddress gpu, long xid) {
    }

    /** Records what the watcher tells, and on which thread. */
    static final class Recorder implements XidListener {
        final List<Xid> xids = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        final Map<PciAddress, List<String>> unsupported = new ConcurrentHashMap<>();

        @Override
        public void onXid(PciAddress gpu, long xid) {
            threads.add(Thread.currentThread().getName());
            xids.add(new Xid(gpu, xid));
        }

        @Override
        public void onEventsUnsupported(PciAddress gpu, String reason) {
            unsupported.computeIfAbsent(gpu, g -> new CopyOnWriteArrayList<>()).add(reason);
        }

        List<Xid> untilSentinel() {
            await().atMost(PATIENCE).until(() -> xids.stream().anyMatch(x -> x.xid() == SENTINEL_XID));
            return xids.subList(0, xids.indexOf(xids.stream().filter(x -> x.xid() == SENTINEL_XID).findFirst().get()));
        }
    }

    @BeforeEach
    void open() {
        stub.stub_reset();
        nvml = Nvml.open(Optional.of(NvmlStub.library()));
        assertThat(nvml.available()).isTrue();
    }

    @AfterEach
    void close() {
        nvml.close();
        assertThat(threads.alive()).as("watcher threads left").isZero();
        assertThat(stub.stub_live_event_sets()).as("event sets left").isZero();
        assertThat(stub.stub_init_refcount()).isZero();
        assertThat(NvmlStub.calls(stub, "nvmlShutdown")).isEqualTo(1);
        NvmlStub.assertNoMisuse(stub);
    }

    @Test
    void deliversTheCriticalXidAndFiltersTheApplicationXid() {
        try (XidWatcher watcher = XidWatcher.start(nvml, fast, recorder)) {
            assertThat(watcher.running()).isTrue();
            assertThat(watcher.watchedGpus()).containsExactlyInAnyOrder(GPU0, GPU1);

            await().atMost(PATIENCE).until(() -> !recorder.xids.isEmpty());

            assertThat(stub.stub_events_taken()).as("the ignored XID 43 came first and was taken").isEqualTo(2);
            assertThat(recorder.xids).containsExactly(new Xid(GPU1, 79));
            assertThat(recorder.threads).containsOnly(XidWatcher.THREAD_NAME);
        }
    }

    static Stream<Arguments> filters() {
        return Stream.of(
                Arguments.of(XidWatcher.DEFAULT_IGNORED_XIDS, List.of(new Xid(GPU1, 79))),
                Arguments.of(Set.of(), List.of(new Xid(GPU0, 43), new Xid(GPU1, 79))),
                Arguments.of(Set.of(79L), List.of(new Xid(GPU0, 43))),
                Arguments.of(Set.of(43L, 79L), List.of()));
    }

    @ParameterizedTest(name = "ignoring {0} delivers {1}")
    @MethodSource("filters")
    void ignoredXidsAreConfigurable(Set<Long> ignored, List<Xid> delivered) {
        stub.stub_queue_event(0, XID, SENTINEL_XID);

        try (XidWatcher watcher = XidWatcher.start(nvml, fast.withIgnoredXids(ignored), recorder)) {
            assertThat(recorder.untilSentinel()).isEqualTo(delivered);
            assertThat(watcher.running()).isTrue();
        }
    }

    /** Records every event, counted or not. */
    static final class EventRecorder implements XidListener {
        final List<XidEvent> events = new CopyOnWriteArrayList<>();

        @Override
        public void onXid(PciAddress gpu, long xid) {
            throw new AssertionError("onXidEvent is overridden, so onXid is never called");
        }

        @Override
        public void onXidEvent(XidEvent event) {
            events.add(event);
        }

        List<XidEvent> untilSentinel() {
            await().atMost(PATIENCE).until(() -> events.stream().anyMatch(e -> e.xid() == SENTINEL_XID));
            return events.subList(0, events.indexOf(events.stream().filter(e -> e.xid() == SENTINEL_XID).findFirst()
                    .get()));
        }
    }

    @Test
    void everyXidEventReachesTheListenerOnceIgnoredOnesNotCountedWithItsGpuInstance() {
        stub.stub_queue_instance_event(1, XID, 48, 3);
        stub.stub_queue_event(-1, XID, 79);
        stub.stub_queue_event(0, XID, SENTINEL_XID);
        EventRecorder events = new EventRecorder();

        try (XidWatcher watcher = XidWatcher.start(nvml, fast, events)) {
            assertThat(events.untilSentinel()).containsExactly(
                    new XidEvent(43, Optional.of(GPU0), List.of(GPU0), java.util.OptionalInt.empty(), false),
                    new XidEvent(79, Optional.of(GPU1), List.of(GPU1), java.util.OptionalInt.empty(), true),
                    new XidEvent(48, Optional.of(GPU1), List.of(GPU1), java.util.OptionalInt.of(3), true),
                    new XidEvent(79, Optional.empty(), List.of(GPU0, GPU1), java.util.OptionalInt.empty(), true));
            assertThat(events.events.get(2).describe()).isEqualTo("XID 48 on GPU 0000:c1:00.0, GPU instance 3");
            assertThat(watcher.running()).isTrue();
        }
    }

    @Test
    void aNewIgnoreListAppliesFromTheNextEvent() {
        stub.stub_clear_events();
        EventRecorder events = new EventRecorder();
        try (XidWatcher watcher = XidWatcher.start(nvml, fast, events)) {
            stub.stub_queue_event(0, XID, 43);
            stub.stub_queue_event(0, XID, 79);
            stub.stub_queue_event(0, XID, SENTINEL_XID);
            assertThat(events.untilSentinel()).extracting(XidEvent::counted).containsExactly(false, true);

            watcher.ignore(Set.of(79L));
            events.events.clear();
            stub.stub_queue_event(0, XID, 43);
            stub.stub_queue_event(0, XID, 79);
            stub.stub_queue_event(0, XID, SENTINEL_XID);
            assertThat(events.untilSentinel()).extracting(XidEvent::counted).containsExactly(true, false);
        }
    }

    @Test
    void defaultIgnoredXidsAreTheApplicationErrorsOfNvidiasDevicePlugin() {
        assertThat(XidWatcher.DEFAULT_IGNORED_XIDS).containsExactlyInAnyOrder(13L, 31L, 43L, 45L, 68L, 109L);
        assertThat(XidWatcher.Options.defaults().waitTimeout()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void gpusThatCannotReportXidsAreToldOnceEach() {
        try (XidWatcher watcher = XidWatcher.start(nvml, fast, recorder)) {
            await().atMost(PATIENCE).until(() -> recorder.unsupported.size() == 2 && !recorder.xids.isEmpty());
            assertThat(watcher.watchedGpus()).doesNotContain(GPU2_MANY_TYPES, GPU3_NO_VGPU);
        }

        assertThat(recorder.unsupported).containsOnlyKeys(GPU2_MANY_TYPES, GPU3_NO_VGPU);
        assertThat(recorder.unsupported.get(GPU2_MANY_TYPES)).singleElement().asString()
                .startsWith("NVML_ERROR_NOT_SUPPORTED from nvmlDeviceRegisterEvents(0001:03:00.0, 0x8)");
        assertThat(recorder.unsupported.get(GPU3_NO_VGPU)).singleElement().asString()
                .startsWith("NVML_ERROR_NOT_SUPPORTED from nvmlDeviceGetSupportedEventTypes(0000:81:00.0)")
                .contains("0x0");
    }

    @Test
    void anXidNvmlCannotAttributeIsReportedForEveryWatchedGpu() {
        stub.stub_clear_events();
        stub.stub_queue_event(-1, XID, 48);
        stub.stub_queue_event(0, XID, SENTINEL_XID);

        try (XidWatcher watcher = XidWatcher.start(nvml, fast, recorder)) {
            assertThat(recorder.untilSentinel()).containsExactly(new Xid(GPU0, 48), new Xid(GPU1, 48));
            assertThat(watcher.watchedGpus()).containsExactlyInAnyOrder(GPU0, GPU1);
        }
    }

    @ParameterizedTest(name = "a listener that throws {0} does not stop the watcher")
    @ValueSource(classes = {IllegalStateException.class, NoClassDefFoundError.class})
    void aListenerThatThrowsDoesNotStopTheWatcher(Class<? extends Throwable> kind) {
        stub.stub_queue_event(0, XID, SENTINEL_XID);
        XidListener throwing = (gpu, xid) -> {
            recorder.onXid(gpu, xid);
            if (kind == NoClassDefFoundError.class) {
                throw new NoClassDefFoundError("com/example/Missing");
            }
            throw new IllegalStateException("listener bug");
        };

        try (XidWatcher watcher = XidWatcher.start(nvml, fast, throwing)) {
            assertThat(recorder.untilSentinel()).containsExactly(new Xid(GPU1, 79));
            assertThat(watcher.running()).isTrue();
        }
    }

    @Test
    void waitsWithTheConfiguredTimeoutAndCloseLeavesNoThread() {
        XidWatcher watcher = XidWatcher.start(nvml, fast.withWaitTimeout(Duration.ofMillis(75)), recorder);
        await().atMost(PATIENCE).until(() -> NvmlStub.calls(stub, "nvmlEventSetWait_v2") >= 3);

        watcher.close();

        assertThat(stub.stub_last_wait_timeout()).isEqualTo(75);
        assertThat(watcher.running()).isFalse();
        assertThat(threads.alive()).isZero();
        assertThat(stub.stub_live_event_sets()).isZero();
        assertThat(nvml.available()).as("closing a watcher leaves NVML open").isTrue();
        assertThat(stub.stub_init_refcount()).isEqualTo(1);
    }

    @Test
    void aFailingWaitBacksOffInsteadOfSpinningAndStillStopsAtOnce() {
        stub.stub_set_wait_result(15); // NVML_ERROR_GPU_IS_LOST, answered immediately
        XidWatcher watcher = XidWatcher.start(nvml, fast.withWaitTimeout(Duration.ofMinutes(1)), recorder);
        Thread thread = threads.last();

        await().atMost(PATIENCE).until(() -> thread.getState() == Thread.State.TIMED_WAITING);
        assertThat(NvmlStub.calls(stub, "nvmlEventSetWait_v2")).as("one failed wait, then a pause").isEqualTo(1);

        watcher.close();

        assertThat(thread.isAlive()).isFalse();
    }

    @Test
    void closingNvmlStopsItsWatchersBeforeShuttingDown() {
        XidWatcher watcher = XidWatcher.start(nvml, fast, recorder);
        Thread thread = threads.last();

        nvml.close();

        assertThat(thread.isAlive()).isFalse();
        assertThat(watcher.running()).isFalse();
        assertThat(stub.stub_live_event_sets()).isZero();
        assertThat(stub.stub_init_refcount()).isZero();
    }

    @Test
    void theListenerMayCloseItsOwnWatcher() {
        AtomicReference<XidWatcher> self = new AtomicReference<>();
        XidListener closing = (gpu, xid) -> {
            recorder.onXid(gpu, xid);
            self.get().close();
        };
        stub.stub_clear_events();

        self.set(XidWatcher.start(nvml, fast, closing));
        Thread thread = threads.last();
        stub.stub_queue_event(1, XID, 79);

        await().atMost(PATIENCE).until(() -> !thread.isAlive());
        assertThat(recorder.xids).containsExactly(new Xid(GPU1, 79));
        assertThat(self.get().running()).isFalse();
    }

    @Test
    void manyStartsAndStopsLeaveNothingBehind() {
        for (int i = 0; i < 30; i++) {
            stub.stub_queue_event(1, XID, 79);
            try (XidWatcher watcher = XidWatcher.start(nvml, fast, (gpu, xid) -> { })) {
                assertThat(watcher.watchedGpus()).hasSize(2);
            }
            assertThat(threads.alive()).as("iteration %d", i).isZero();
            assertThat(stub.stub_live_event_sets()).as("iteration %d", i).isZero();
            assertThat(stub.stub_init_refcount()).as("iteration %d", i).isEqualTo(1);
        }
    }

    @Test
    void closingNvmlWhileWatchersStartLeavesNothingBehind() throws InterruptedException {
        nvml.close();
        for (int i = 0; i < 40; i++) {
            Nvml racing = Nvml.open(Optional.of(NvmlStub.library()));
            AtomicReference<XidWatcher> started = new AtomicReference<>();
            CountDownLatch go = new CountDownLatch(2);
            Thread starter = new Thread(() -> {
                go.countDown();
                awaitQuietly(go);
                started.set(XidWatcher.start(racing, fast, (gpu, xid) -> { }));
            });
            starter.start();
            go.countDown();
            awaitQuietly(go);
            for (int spin = 0; spin < i * 500; spin++) {
                Thread.onSpinWait(); // later closes as the iterations go on, to meet start() at different points
            }
            racing.close();
            starter.join();
            started.get().close();

            assertThat(threads.alive()).as("iteration %d", i).isZero();
            assertThat(stub.stub_live_event_sets()).as("iteration %d", i).isZero();
            assertThat(stub.stub_init_refcount()).as("iteration %d", i).isZero();
        }
        stub.stub_reset();
        nvml = Nvml.open(Optional.of(NvmlStub.library()));
    }

    @Test
    void theWatcherRunsOnTheThreadItsOptionsMake() {
        stub.stub_clear_events();
        XidWatcher.Options named = fast.withThreads(task -> new Thread(task, "embedder-xid"));
        try (XidWatcher watcher = XidWatcher.start(nvml, named.withIgnoredXids(Set.of()), recorder)) {
            stub.stub_queue_event(1, XID, 79);
            await().atMost(PATIENCE).until(() -> !recorder.threads.isEmpty());
            assertThat(watcher.running()).isTrue();
        }
        assertThat(recorder.threads).containsOnly("embedder-xid");
        assertThat(XidWatcher.Options.defaults().threads().newThread(() -> { }).getName())
                .isEqualTo(XidWatcher.THREAD_NAME);
    }

    @Test
    void aThreadFactoryThatMakesNoThreadLeavesAWatcherOfNothingAndNothingOpen() {
        try (XidWatcher watcher = XidWatcher.start(nvml, fast.withThreads(task -> null), recorder)) {
            assertThat(watcher.running()).isFalse();
            assertThat(watcher.watchedGpus()).isEmpty();
        }
        assertThat(stub.stub_live_event_sets()).isZero();
        assertThat(stub.stub_init_refcount()).isEqualTo(1);
    }

    @Test
    void optionsRejectNonsenseTimeouts() {
        assertThatThrownBy(() -> fast.withWaitTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1ms and 1m");
        assertThatThrownBy(() -> fast.withWaitTimeout(Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1ms and 1m");
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
