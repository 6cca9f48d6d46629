package dev.vgpu.core.internal;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/** The project's single-thread owners: how they are made and how they stop. */
public final class Threads {

    private Threads() {
    }

    /** Daemon threads of this name. */
    public static ThreadFactory daemon(String name) {
        return task -> {
            Thread t = new Thread(task, name);
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * One owning thread with timers. A cancelled timer leaves its queue at once, and timers still pending when it
     * shuts down are dropped, so that {@link #stop} waits only for the task that is running, not for a retry a minute
     * away.
     */
    public static ScheduledThreadPoolExecutor owner(ThreadFactory threads) {
        ScheduledThreadPoolExecutor owner = new ScheduledThreadPoolExecutor(1, threads);
        owner.setRemoveOnCancelPolicy(true);
        owner.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        owner.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        return owner;
    }

    /**
     * Lets the tasks already posted run, then stops: interrupts what is still running after {@code grace}. Keeps the
     * caller's interrupt.
     */
    public static void stop(ExecutorService executor, Duration grace) {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
