package dev.vgpu.deviceplugin;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Runs {@link ResourcePlugin#check()} on every plugin: periodically, and at once when a watched directory (the
 * device-plugin directory, {@code /dev/vfio} under the host root) changes. Checks run on the scheduler, one at a
 * time ({@code checkLock}); a burst of watch events queues at most one extra check ({@code queued}).
 */
final class PluginChecks implements AutoCloseable {

    private final Supplier<Collection<ResourcePlugin>> plugins;
    private final Runnable beforeEachRound;
    private final ScheduledExecutorService scheduler;
    private final ReentrantLock checkLock = new ReentrantLock();
    private final AtomicBoolean queued = new AtomicBoolean();
    private final HostWatcher watcher;

    /**
     * Starts watching and the periodic checks.
     *
     * @throws IOException when no watch service can be made
     */
    PluginChecks(Supplier<Collection<ResourcePlugin>> plugins, Runnable beforeEachRound,
                 ScheduledExecutorService scheduler, List<Path> watched, long pollNanos) throws IOException {
        this.plugins = plugins;
        this.beforeEachRound = beforeEachRound;
        this.scheduler = scheduler;
        this.watcher = new HostWatcher(watched, this::request).start();
        scheduler.scheduleWithFixedDelay(Guarded.task("device-plugin check", this::checkAll), pollNanos, pollNanos,
                TimeUnit.NANOSECONDS);
    }

    /** Queues one check soon, unless one is queued already. Never blocks. */
    void request() {
        if (queued.compareAndSet(false, true)) {
            try {
                scheduler.execute(Guarded.task("device-plugin check", () -> {
                    queued.set(false);
                    checkAll();
                }));
            } catch (RejectedExecutionException e) {
                queued.set(false);
            }
        }
    }

    private void checkAll() {
        checkLock.lock();
        try {
            watcher.ensureWatching();
            beforeEachRound.run();
            for (ResourcePlugin plugin : plugins.get()) {
                plugin.check();
            }
        } finally {
            checkLock.unlock();
        }
    }

    /** Stops watching; the caller shuts the scheduler down. */
    @Override
    public void close() {
        watcher.close();
    }
}
