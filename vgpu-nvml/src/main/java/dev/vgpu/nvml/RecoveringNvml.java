package dev.vgpu.nvml;

import dev.vgpu.core.spi.VgpuTypeResolver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NVML that may come up after the program started: the owner of the current {@link Nvml}, which loads and
 * initializes it again while it is down (the library not there yet, or {@code nvmlInit_v2} failing while the
 * driver loads) and, once it is up, names vGPU types through it and starts the XID watcher.
 *
 * <pre>{@code
 * try (RecoveringNvml nvml = RecoveringNvml.open(Optional.empty())) {    // first attempt, one log line
 *     VgpuTypeResolver names = nvml.vgpuTypeResolver();                   // always the current NVML
 *     nvml.watchXids((gpu, xid) -> markUnhealthy(gpu, xid));              // now, or when NVML comes up
 *     if (rescansEnabled) {
 *         beforeEachScan(nvml::retry);                                    // cheap while NVML is up
 *     } else {
 *         nvml.retryEvery(Duration.ofMinutes(1));                          // one thread, only while down
 *     }
 * }
 * }</pre>
 *
 * <p>What is retried: loading the library while it cannot be loaded (a missing file costs one
 * {@code stat}), then {@code nvmlInit_v2} on the library already loaded, which is not loaded again. Nothing
 * is retried once NVML is up (this class does not take NVML down again: an error of one call is that call's
 * answer, see {@link #vgpuTypeResolver()}), nor for {@link #disabled} ({@code --no-nvml}), nor after
 * {@link #close()}.
 *
 * <p>Logs (logger {@code RecoveringNvml}): one INFO line for the first attempt, {@code NVML in use: ...} or
 * {@code NVML not in use: ...; retried while it is down}; one INFO line when a retry brings NVML up,
 * {@code NVML in use: ... (up on retry N)}. A failed retry logs at DEBUG only.
 *
 * <p>Threads: every method may be called from any thread. Attempts, the start of the XID watcher and close
 * are serialized by one lock, so NVML is initialized at most once; the current {@link Nvml} is published
 * through a volatile field, so {@link #available()}, {@link #description()} and the resolver never wait for
 * an attempt in flight, except that the resolver waits for the first attempt of {@link #openInBackground} (which
 * runs on the executor's thread, under the lock). Recovery actions ({@link #onRecovery}) run on the thread whose
 * retry brought NVML up, outside the lock. The retry thread of {@link #retryEvery} ({@value #RETRY_THREAD_NAME}, or
 * the one a caller's factory made) lives only while NVML is down: it ends when NVML comes up, and {@link #close()}
 * ends it and waits for it. The XID watcher's thread comes from its {@link XidWatcher.Options#threads()}.
 */
public final class RecoveringNvml implements AutoCloseable {

    /** Name of the thread {@link #retryEvery} starts. */
    public static final String RETRY_THREAD_NAME = "vgpu-nvml-retry";

    private static final Logger LOG = LoggerFactory.getLogger(RecoveringNvml.class);
    private static final Duration LONGEST_WAIT_FOR_RETRY_THREAD = Duration.ofSeconds(30);
    /** The retry thread by default: one named {@value #RETRY_THREAD_NAME}. */
    private static final ThreadFactory RETRY_THREAD = task -> new Thread(task, RETRY_THREAD_NAME);

    /** The library to load; null when nothing is ever retried (disabled, or a library name that cannot be used). */
    private final String target;
    private final Object lock = new Object();

    // Written under lock, read anywhere.
    private volatile Nvml current;
    private volatile boolean closed;

    // Guarded by lock.
    private NvmlApi loaded;
    private int failedRetries;
    private XidListener xidListener;
    private XidWatcher.Options xidOptions;
    private XidWatcher xidWatcher;
    private final List<Runnable> recoveryActions = new ArrayList<>();
    private CountDownLatch stopRetrying;
    private Thread retryThread;

    /** Open until the first attempt has ended (at once for {@link #open} and {@link #disabled}) or close ran. */
    private final CountDownLatch firstAttemptDone = new CountDownLatch(1);

    private RecoveringNvml(String target, Nvml first) {
        this.target = target;
        this.current = first;
    }

    /**
     * Loads and initializes NVML once now, like {@link Nvml#open(Optional)}, and keeps the library to retry
     * while that fails; never throws.
     *
     * @param library a library file to load instead of the {@value Nvml#LIBRARY_PROPERTY} property or
     *                {@value Nvml#DEFAULT_LIBRARY}
     * @return the owner, up or down
     */
    public static RecoveringNvml open(Optional<Path> library) {
        Objects.requireNonNull(library, "library");
        String target;
        try {
            target = Nvml.target(library);
        } catch (RuntimeException e) {
            Nvml unusable = Nvml.notInUse(new NvmlException(NvmlReturn.LIBRARY_NOT_FOUND, "Nvml.open", String.valueOf(e)));
            LOG.info("{}; not retried (the library name cannot be used)", unusable.description());
            RecoveringNvml never = new RecoveringNvml(null, unusable);
            never.firstAttemptDone.countDown();
            return never;
        }
        RecoveringNvml nvml = new RecoveringNvml(target, Nvml.unavailable("not loaded yet"));
        nvml.firstAttempt();
        return nvml;
    }

    /**
     * Under the lock, after an attempt brought NVML up: the XID watcher asked for, the end of the retry thread, and
     * the recovery actions to run outside the lock.
     */
    private List<Runnable> cameUp(Nvml up) {
        if (xidListener != null) {
            xidWatcher = XidWatcher.start(up, xidOptions, xidListener);
        }
        if (stopRetrying != null) {
            stopRetrying.countDown();
        }
        List<Runnable> actions = List.copyOf(recoveryActions);
        recoveryActions.clear();
        return actions;
    }

    /**
     * Like {@link #open(Optional)}, with the first attempt handed to {@code executor} (e.g. a thread of its own), so
     * that a caller's start is not held up by loading the library and {@code nvmlInit_v2}. Until that attempt has
     * ended, NVML counts as down ({@link #available()} false, {@link #description()} says it is being loaded,
     * {@link #retry()} attempts nothing and {@link #checkGpu} answers that it is being loaded), except that the
     * {@link #vgpuTypeResolver() resolver} waits for the attempt and answers as it leaves NVML: names asked for
     * during the first scan come out as {@link #open(Optional)} would give them. When the attempt brings NVML up, it
     * does what a successful {@link #retry()} does (XID watcher, retry thread, recovery actions); it logs as
     * {@code open} does. {@link #awaitFirstAttempt()} waits for it.
     *
     * @param library  as for {@link #open(Optional)}
     * @param executor runs the first attempt once; if it refuses, the attempt runs on the caller
     * @return the owner, NVML being loaded
     */
    public static RecoveringNvml openInBackground(Optional<Path> library, java.util.concurrent.Executor executor) {
        Objects.requireNonNull(library, "library");
        Objects.requireNonNull(executor, "executor");
        String target;
        try {
            target = Nvml.target(library);
        } catch (RuntimeException e) {
            return open(library); // logs why the name cannot be used, as open does
        }
        RecoveringNvml nvml = new RecoveringNvml(target, Nvml.unavailable(BEING_LOADED));
        try {
            executor.execute(nvml::firstAttempt);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            nvml.firstAttempt();
        }
        return nvml;
    }

    /** Why NVML is not in use while the first attempt of {@link #openInBackground} has not ended. */
    static final String BEING_LOADED = "being loaded (its first attempt runs beside the first scan)";

    /**
     * Waits until the first attempt has ended (returns at once after {@link #open}, for {@link #disabled} and after
     * close); on an interrupt it returns at once, the thread's interrupt status set.
     */
    public void awaitFirstAttempt() {
        try {
            firstAttemptDone.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The first attempt: one log line; on success, what a successful retry starts. Any thread, once. */
    private void firstAttempt() {
        List<Runnable> actions = List.of();
        try {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                Nvml first = attempt();
                current = first;
                if (!first.available()) {
                    LOG.info("{}; retried while it is down", first.description());
                    return;
                }
                LOG.info("{}", first.description());
                actions = cameUp(first);
            }
        } finally {
            firstAttemptDone.countDown();
        }
        runRecoveryActions(actions);
    }

    /**
     * The null object ({@code --no-nvml}): never loads NVML, never retries, watches nothing.
     *
     * @param reason why, for {@link #description()}, e.g. {@code "disabled by --no-nvml"}
     */
    public static RecoveringNvml disabled(String reason) {
        RecoveringNvml nvml = new RecoveringNvml(null, Nvml.unavailable(reason));
        nvml.firstAttemptDone.countDown();
        return nvml;
    }

    /** True while NVML is up (and {@link #close()} has not run). */
    public boolean available() {
        return !closed && current.available();
    }

    /** One line for a log: {@code NVML in use: ...}, or {@code NVML not in use: <the latest reason>}. */
    public String description() {
        return current.description();
    }

    /**
     * Names vGPU types through whichever NVML is current at each call: while NVML is down (or disabled, or
     * after close) every answer is {@code VgpuTypeNames.unavailable} with the reason; once it is up, answers
     * come from it (see the answers of {@link Nvml#vgpuTypeResolver()}). Never throws; does not retry by
     * itself. Wrap it in {@link VgpuTypeResolver#memoizing} once per scan.
     */
    public VgpuTypeResolver vgpuTypeResolver() {
        return pf -> {
            awaitFirstAttempt();
            return current.vgpuTypeResolver().supportedTypes(pf);
        };
    }

    /**
     * Loads and initializes NVML again if it is down; does nothing (and calls nothing native) while it is
     * up, when disabled and after close. When this call brings NVML up it logs one line, starts the XID
     * watcher asked for by {@link #watchXids}, ends the retry thread and runs the recovery actions (on this
     * thread). Never throws for NVML errors. Meant to be called before each scan.
     *
     * @return true when NVML is up after this call
     */
    public boolean retry() {
        if (firstAttemptDone.getCount() > 0) {
            return current.available(); // the first attempt is under way (it holds the lock): nothing to add
        }
        List<Runnable> actions;
        synchronized (lock) {
            if (closed || target == null) {
                return false;
            }
            if (current.available()) {
                return true;
            }
            Nvml next = attempt();
            current = next;
            if (!next.available()) {
                failedRetries++;
                LOG.debug("NVML retry {} failed: {}", failedRetries, next.description());
                return false;
            }
            LOG.info("{} (up on retry {})", next.description(), failedRetries + 1);
            actions = cameUp(next);
        }
        runRecoveryActions(actions);
        return true;
    }

    private static void runRecoveryActions(List<Runnable> actions) {
        for (Runnable action : actions) {
            try {
                action.run();
            } catch (RuntimeException e) {
                LOG.error("an action run when NVML came up failed", e);
            }
        }
    }

    /**
     * Retries on a thread of its own ({@value #RETRY_THREAD_NAME}, a daemon thread) every {@code period}
     * while NVML is down, for callers that do not scan periodically. Starts no thread when NVML is up,
     * disabled or closed; the thread ends when NVML comes up (by any caller's retry) or at close.
     *
     * @param period the pause between two attempts, at least 1 ms
     * @throws IllegalStateException when called a second time
     */
    public void retryEvery(Duration period) {
        retryEvery(period, RETRY_THREAD);
    }

    /**
     * Like {@link #retryEvery(Duration)}, with the retry thread from {@code threads}: a new, unstarted thread, which
     * this class makes a daemon thread and starts (an embedder's naming, a test's record of the thread it gave).
     *
     * @param period  the pause between two attempts, at least 1 ms
     * @param threads makes the retry thread, if one is needed
     * @throws IllegalStateException when called a second time
     */
    public void retryEvery(Duration period, ThreadFactory threads) {
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(threads, "threads");
        if (period.toMillis() < 1) {
            throw new IllegalArgumentException("NVML retry period must be at least 1ms, not " + period);
        }
        synchronized (lock) {
            if (stopRetrying != null) {
                throw new IllegalStateException("NVML retries are already scheduled");
            }
            stopRetrying = new CountDownLatch(1);
            if (closed || target == null || current.available()) {
                stopRetrying.countDown();
                return;
            }
            CountDownLatch stop = stopRetrying;
            retryThread = Objects.requireNonNull(threads.newThread(() -> retryUntilUp(stop, period)),
                    "the retry thread factory made no thread");
            retryThread.setDaemon(true);
            retryThread.start();
        }
    }

    /**
     * Watches critical XIDs with {@link XidWatcher.Options#defaults()}: now when NVML is up, else from the
     * retry that brings it up. The watcher stops at {@link #close()}.
     *
     * @param listener told about critical XIDs, on the watcher's thread
     * @throws IllegalStateException when called a second time
     */
    public void watchXids(XidListener listener) {
        watchXids(XidWatcher.Options.defaults(), listener);
    }

    /**
     * Watches critical XIDs: now when NVML is up, else from the retry that brings it up; never throws for
     * NVML errors (see {@link XidWatcher#start(Nvml, XidWatcher.Options, XidListener)}). The watcher stops at
     * {@link #close()}.
     *
     * @param options  ignored XIDs and the wait timeout
     * @param listener told about critical XIDs, on the watcher's thread
     * @throws IllegalStateException when called a second time
     */
    public void watchXids(XidWatcher.Options options, XidListener listener) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        synchronized (lock) {
            if (xidListener != null) {
                throw new IllegalStateException("XIDs are already watched");
            }
            xidListener = listener;
            xidOptions = options;
            if (closed) {
                return;
            }
            if (current.available() || target == null) {
                // up: watch now; never retried: the watcher logs why it does not start, as before
                xidWatcher = XidWatcher.start(current, options, listener);
            } else {
                LOG.info("XID watcher starts when NVML comes up");
            }
        }
    }

    /**
     * Replaces the XIDs the watcher asked for with {@link #watchXids} ignores, from its next event on (also for a
     * watcher that starts later, when NVML comes up); any thread. Does nothing when XIDs are not watched.
     *
     * @param xids XIDs passed on as not counted ({@link XidEvent#counted()} false)
     */
    public void ignoreXids(Set<Long> xids) {
        Set<Long> copy = Set.copyOf(xids);
        synchronized (lock) {
            if (xidOptions == null || xidOptions.ignoredXids().equals(copy)) {
                return;
            }
            xidOptions = xidOptions.withIgnoredXids(copy);
            if (xidWatcher != null) {
                xidWatcher.ignore(copy);
            }
        }
        LOG.info("XIDs ignored from the next event on: {}", new java.util.TreeSet<>(copy));
    }

    /**
     * Whether NVML answers for one physical GPU now ({@link Nvml#checkGpu}); never throws, never retries.
     *
     * @return empty when it does; otherwise why not (NVML down, disabled or closed, or the GPU's error)
     */
    public Optional<String> checkGpu(dev.vgpu.core.PciAddress gpu) {
        if (closed) {
            return Optional.of("NVML has been closed");
        }
        return current.checkGpu(gpu); // until the first attempt ends: unavailable, "being loaded"
    }

    /**
     * Runs {@code action} once, on the thread of the retry that brings NVML up (after the XID watcher has
     * started); never when NVML is already up, disabled or closed, or never comes up. It must not wait for
     * work that itself calls {@link #retry()} on another thread; an exception it throws is logged.
     */
    public void onRecovery(Runnable action) {
        Objects.requireNonNull(action, "action");
        synchronized (lock) {
            if (!closed && target != null && !current.available()) {
                recoveryActions.add(action);
            }
        }
    }

    /** Ends the retry thread and waits for it, stops the XID watcher and releases NVML. Idempotent. */
    @Override
    public void close() {
        Thread retrying;
        XidWatcher watcher;
        Nvml last;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            if (stopRetrying != null) {
                stopRetrying.countDown();
            }
            retrying = retryThread;
            watcher = xidWatcher;
            last = current;
            recoveryActions.clear();
        }
        // A first attempt not begun yet never begins (it sees closed); nobody waits for it any more.
        firstAttemptDone.countDown();
        // Outside the lock: the retry thread may be waiting for it to find out that it must stop.
        if (retrying != null && retrying != Thread.currentThread()) {
            joinRetryThread(retrying);
        }
        if (watcher != null) {
            watcher.close();
        }
        last.close();
    }

    /** The running XID watcher, if NVML is up and XIDs are watched; for tests. */
    Optional<XidWatcher> xidWatcher() {
        synchronized (lock) {
            return Optional.ofNullable(xidWatcher);
        }
    }

    /** One load (unless an earlier attempt loaded the library) and init; never throws. Caller holds lock. */
    private Nvml attempt() {
        try {
            if (loaded == null) {
                loaded = Nvml.load(target);
            }
            return Nvml.initialize(target, loaded);
        } catch (NvmlException e) {
            return Nvml.notInUse(e);
        } catch (RuntimeException | LinkageError e) {
            return Nvml.notInUse(new NvmlException(NvmlReturn.UNKNOWN, "loading " + target, String.valueOf(e)));
        }
    }

    private void retryUntilUp(CountDownLatch stop, Duration period) {
        long pauseMs = period.toMillis();
        try {
            while (!stop.await(pauseMs, TimeUnit.MILLISECONDS)) {
                try {
                    if (retry()) {
                        return;
                    }
                } catch (RuntimeException | LinkageError e) {
                    LOG.error("NVML retry failed unexpectedly; trying again in {} ms", pauseMs, e);
                }
            }
        } catch (InterruptedException e) {
            LOG.warn("NVML retry thread interrupted; NVML is retried only when asked from now on");
        } catch (Error e) {
            // e.g. OutOfMemoryError: not this task's to swallow, but never a silent end of the retries
            LOG.error("NVML retry thread stops: {}", e.toString(), e);
            throw e;
        }
    }

    private static void joinRetryThread(Thread thread) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + LONGEST_WAIT_FOR_RETRY_THREAD.toNanos();
        try {
            while (thread.isAlive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warn("NVML retry thread did not stop within {} s (blocked in the driver?)",
                            LONGEST_WAIT_FOR_RETRY_THREAD.toSeconds());
                    return;
                }
                try {
                    thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
