package dev.vgpu.nvml;

import com.sun.jna.Memory;
import dev.vgpu.core.PciAddress;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches every physical GPU NVML sees for critical XID errors and hands each one, with the GPU's PCI
 * address, to an {@link XidListener} on its own thread ({@value #THREAD_NAME}).
 *
 * <pre>{@code
 * try (XidWatcher xids = XidWatcher.start(nvml, (gpu, xid) -> health.markUnhealthy(gpu, "XID " + xid))) {
 *     ...
 * }
 * }</pre>
 *
 * <p>The thread waits on an NVML event set with a timeout ({@link Options#waitTimeout()}, 1 s by default),
 * so {@link #close()} returns within about one timeout and leaves no thread behind. A GPU that cannot
 * report XID events is told to the listener once; when the wait itself fails (e.g.
 * {@code NVML_ERROR_GPU_IS_LOST}) the watcher logs once and retries after one timeout rather than spinning.
 * When NVML is unavailable, {@code start} returns a watcher that watches nothing and starts no thread.
 */
public final class XidWatcher implements AutoCloseable {

    /**
     * XIDs that report an application fault, not a broken GPU, ignored by default. Source: NVIDIA's own k8s
     * device plugin, {@code internal/rm/health.go} ({@code getDisabledHealthCheckXids}): 13 graphics engine
     * exception, 31 GPU memory page fault, 43 GPU stopped processing, 45 preemptive cleanup due to previous
     * errors, 68 video processor exception, 109 context switch timeout. (The KubeVirt plugin ignores 31, 43, 45.)
     */
    public static final Set<Long> DEFAULT_IGNORED_XIDS = Set.of(13L, 31L, 43L, 45L, 68L, 109L);

    /** Name of the watcher thread. */
    public static final String THREAD_NAME = "vgpu-nvml-xid-watcher";

    private static final Logger LOG = LoggerFactory.getLogger(XidWatcher.class);
    private static final Duration LONGEST_WAIT = Duration.ofMinutes(1);

    /** The watcher's thread by default: one named {@value #THREAD_NAME} (start() makes it a daemon thread). */
    private static final ThreadFactory NAMED_THREAD = task -> new Thread(task, THREAD_NAME);

    /**
     * What to watch for, and on which thread.
     *
     * @param ignoredXids XIDs that are logged but not passed to the listener
     * @param waitTimeout how long one NVML wait may block; bounds how long {@link #close()} takes
     * @param threads     makes the watcher's one thread (a new, unstarted one; the watcher makes it a daemon thread
     *                    and starts it); by default a thread named {@value #THREAD_NAME}
     */
    public record Options(Set<Long> ignoredXids, Duration waitTimeout, ThreadFactory threads) {

        /** Copies the set and checks the timeout lies between 1 ms and 1 minute. */
        public Options {
            ignoredXids = Set.copyOf(ignoredXids);
            Objects.requireNonNull(waitTimeout, "waitTimeout");
            Objects.requireNonNull(threads, "threads");
            if (waitTimeout.toMillis() < 1 || waitTimeout.compareTo(LONGEST_WAIT) > 0) {
                throw new IllegalArgumentException("XID wait timeout must be between 1ms and 1m, not " + waitTimeout);
            }
        }

        /** Options with the default thread. */
        public Options(Set<Long> ignoredXids, Duration waitTimeout) {
            this(ignoredXids, waitTimeout, NAMED_THREAD);
        }

        /** {@link #DEFAULT_IGNORED_XIDS} and a 1 s wait. */
        public static Options defaults() {
            return new Options(DEFAULT_IGNORED_XIDS, Duration.ofSeconds(1));
        }

        /** A copy ignoring exactly these XIDs (empty: report every XID). */
        public Options withIgnoredXids(Set<Long> xids) {
            return new Options(xids, waitTimeout, threads);
        }

        /** A copy with another wait timeout. */
        public Options withWaitTimeout(Duration timeout) {
            return new Options(ignoredXids, timeout, threads);
        }

        /** A copy whose watcher thread comes from {@code factory} (an embedder's naming, a test's record of it). */
        public Options withThreads(ThreadFactory factory) {
            return new Options(ignoredXids, waitTimeout, factory);
        }
    }

    // Written in start() before the thread starts, then read-only. The watcher thread alone uses the event set
    // and the lease until it releases them on exit; close() only counts the latch down and joins.
    private final Nvml nvml;
    private final Nvml.Lease lease;
    private final NvmlApi.EventSet set;
    private final Map<Long, PciAddress> watched;
    private final Map<PciAddress, String> unsupported;
    private final Options options;
    /** The ignore list in force: the options' at start, replaced by {@link #ignore} from any thread. */
    private volatile Set<Long> ignored;
    private final XidListener listener;
    private final Thread thread;
    private final CountDownLatch stop = new CountDownLatch(1);

    private XidWatcher(Nvml nvml, Nvml.Lease lease, NvmlApi.EventSet set, Map<Long, PciAddress> watched,
                       Map<PciAddress, String> unsupported, Options options, XidListener listener) {
        this.nvml = nvml;
        this.lease = lease;
        this.set = set;
        this.watched = Map.copyOf(watched);
        this.unsupported = Collections.unmodifiableMap(new TreeMap<>(unsupported));
        this.options = options;
        this.ignored = options.ignoredXids();
        this.listener = listener;
        this.thread = lease == null ? null : Objects.requireNonNull(options.threads().newThread(this::run),
                "the XID watcher's thread factory made no thread");
    }

    /**
     * Starts watching with {@link Options#defaults()}; never throws for NVML errors.
     *
     * @param nvml     the NVML to use; the watcher stops when it is closed
     * @param listener told about critical XIDs, on the watcher's thread
     * @return the running watcher, or one that watches nothing
     */
    static XidWatcher start(Nvml nvml, XidListener listener) {
        return start(nvml, Options.defaults(), listener);
    }

    /**
     * Registers critical-XID events on every GPU and starts the thread; never throws for NVML errors (a
     * watcher that watches nothing comes back instead, and the reason is logged).
     *
     * @param nvml     the NVML to use; the watcher stops when it is closed
     * @param options  ignored XIDs and the wait timeout
     * @param listener told about critical XIDs and GPUs without XID events, on the watcher's thread
     * @return the running watcher, or one that watches nothing
     */
    static XidWatcher start(Nvml nvml, Options options, XidListener listener) {
        Objects.requireNonNull(nvml, "nvml");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        Optional<String> notInUse = nvml.unavailableReason();
        if (notInUse.isPresent()) {
            LOG.info("XID watcher not started: {}", notInUse.get());
            return new XidWatcher(nvml, null, null, Map.of(), Map.of(), options, listener);
        }
        Nvml.Lease lease;
        try {
            lease = nvml.lease();
        } catch (NvmlException e) {
            LOG.info("XID watcher not started: {}", e.getMessage());
            return new XidWatcher(nvml, null, null, Map.of(), Map.of(), options, listener);
        }
        NvmlApi api = lease.api();
        NvmlApi.EventSet set = null;
        XidRegistration registration;
        try {
            set = api.eventSetCreate();
            registration = XidRegistration.registerAll(api, set);
        } catch (NvmlException | RuntimeException e) {
            LOG.warn("XID watcher not started: {}", e.getMessage());
            free(api, set);
            lease.close();
            return new XidWatcher(nvml, null, null, Map.of(), Map.of(), options, listener);
        }
        XidWatcher watcher;
        try {
            watcher = new XidWatcher(nvml, lease, set, registration.watched(), registration.unsupported(), options,
                    listener);
        } catch (RuntimeException e) {
            LOG.warn("XID watcher not started: its thread factory failed: {}", e.getMessage());
            free(api, set);
            lease.close();
            return new XidWatcher(nvml, null, null, Map.of(), Map.of(), options, listener);
        }
        LOG.info("watching critical XID errors on GPUs {}, ignoring XIDs {}",
                new TreeSet<>(registration.watched().values()), new TreeSet<>(options.ignoredXids()));
        watcher.thread.setDaemon(true);
        nvml.track(watcher);
        watcher.thread.start();
        return watcher;
    }

    /** The GPUs whose XID events are registered, sorted by address. */
    public SortedSet<PciAddress> watchedGpus() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(watched.values()));
    }

    /**
     * Replaces the ignore list from the next event on (a configuration reload); any thread.
     *
     * @param xids XIDs that are logged and passed on as not counted
     */
    void ignore(Set<Long> xids) {
        ignored = Set.copyOf(xids);
    }

    /** True while the thread waits for events (false for a watcher that watches nothing, and after close). */
    public boolean running() {
        return thread != null && thread.isAlive() && stop.getCount() > 0;
    }

    /**
     * Stops the thread, waiting up to about one wait timeout for NVML's wait to return, then frees the event
     * set. Idempotent; from the listener itself it only asks the thread to stop.
     */
    @Override
    public void close() {
        stop.countDown();
        if (thread == null || thread == Thread.currentThread()) {
            return;
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        NvmlApi api = lease.api();
        try (Memory buffer = new Memory(NvmlApi.EVENT_DATA_SIZE)) {
            unsupported.forEach(this::tellUnsupported);
            if (watched.isEmpty()) {
                LOG.warn("no GPU can report XID errors; the XID watcher stops");
                return;
            }
            int timeoutMs = (int) options.waitTimeout().toMillis();
            boolean failing = false;
            while (stop.getCount() > 0) {
                Optional<NvmlApi.Event> event;
                try {
                    event = api.waitEvent(set, buffer, timeoutMs);
                } catch (NvmlException | RuntimeException | LinkageError e) {
                    if (!failing) {
                        LOG.warn("waiting for XID events failed, retrying every {} ms: {}", timeoutMs, e.getMessage());
                    }
                    failing = true;
                    pause(timeoutMs);
                    continue;
                }
                if (failing) {
                    LOG.info("waiting for XID events works again");
                    failing = false;
                }
                event.ifPresent(this::dispatch);
            }
        } catch (VirtualMachineError e) {
            LOG.error("the XID watcher hit a fatal JVM error and stops: {}", e.toString(), e);
            throw e;
        } catch (Throwable e) {
            // Never end silently: without this line XID health would stop with no trace.
            LOG.error("the XID watcher stopped on an unexpected error; XID health is off until restart: {}",
                    e.toString(), e);
        } finally {
            free(api, set);
            lease.close();
            nvml.untrack(this);
        }
    }

    private void dispatch(NvmlApi.Event event) {
        if ((event.eventType() & NvmlApi.EVENT_XID_CRITICAL_ERROR) == 0) {
            LOG.debug("ignoring NVML event of type 0x{}", Long.toHexString(event.eventType()));
            return;
        }
        long xid = event.eventData();
        Optional<PciAddress> gpu = Optional.ofNullable(watched.get(event.device()));
        boolean counted = !ignored.contains(xid);
        List<PciAddress> gpus = gpu.map(List::of).orElseGet(() -> List.copyOf(new TreeSet<>(watched.values())));
        XidEvent news = new XidEvent(xid, gpu, gpus, XidEvent.instance(event.gpuInstance()), counted);
        if (!counted) {
            LOG.info("ignoring {} (an application error, on the ignore list)", news.describe());
        } else if (gpu.isEmpty()) {
            LOG.warn("critical {}; reporting it for every watched GPU {}", news.describe(), gpus);
        } else {
            LOG.warn("critical {}", news.describe());
        }
        try {
            listener.onXidEvent(news);
        } catch (RuntimeException | LinkageError e) {
            LOG.error("XID listener failed for {}", news.describe(), e);
        }
    }

    private void tellUnsupported(PciAddress gpu, String reason) {
        try {
            listener.onEventsUnsupported(gpu, reason);
        } catch (RuntimeException e) {
            LOG.error("XID listener failed for GPU {} without XID events", gpu, e);
        }
    }

    /** Back-off after a failed wait: returns early when close() is called. */
    private void pause(int timeoutMs) {
        try {
            stop.await(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop.countDown();
        }
    }

    private static void free(NvmlApi api, NvmlApi.EventSet set) {
        if (set == null) {
            return;
        }
        try {
            api.eventSetFree(set);
        } catch (NvmlException e) {
            LOG.warn("NVML event set could not be freed: {}", e.getMessage());
        }
    }
}
