package dev.vgpu.core.internal;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One serial queue over a scheduler: tasks posted from any thread run one at a time, in the order they were posted,
 * on whichever thread drains the queue: a scheduler thread, or the caller of {@link #call} (docs/ARCHITECTURE.md,
 * "Threads and mutable state"). The state a context owns is touched only by its tasks, so it needs no lock. Tasks must not block: blocking work runs outside
 * (on the caller's thread or another lane) and posts its result back.
 *
 * <p>Each adapter has one such context that owns its state, and lanes of the same kind for blocking work (the
 * device plugin's health and socket checks and GPU-fault VF listings; the DRA plugin's claim files and checks), so
 * those run in order too but never hold the owner. A task that throws is logged with the context's name and the
 * queue goes on ({@link Guarded}); a JVM error ({@link VirtualMachineError}) is also handed to the context's fatal
 * listener, so that a liveness probe can fail on it, then rethrown. Both adapters share it through
 * {@code dev.vgpu.core.internal}: it is not API.
 */
public final class SerialContext implements Executor {

    private final String name;
    private final ScheduledExecutorService scheduler;
    private final Consumer<VirtualMachineError> fatal;
    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
    /** The thread draining the queue now, null when none: at most one drains at a time. */
    private final AtomicReference<Thread> drainer = new AtomicReference<>();

    /** A context named {@code name} (for log lines) whose tasks and timers run on {@code scheduler}. */
    public SerialContext(String name, ScheduledExecutorService scheduler) {
        this(name, scheduler, error -> { });
    }

    /**
     * As {@link #SerialContext(String, ScheduledExecutorService)}, telling {@code fatal} of every JVM error a task
     * throws (before it is rethrown into the scheduler, which would keep it to itself).
     */
    public SerialContext(String name, ScheduledExecutorService scheduler, Consumer<VirtualMachineError> fatal) {
        this.name = Objects.requireNonNull(name, "name");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.fatal = Objects.requireNonNull(fatal, "fatal");
    }

    /** Queues {@code task} to run after every task posted before it; never blocks. Dropped once the scheduler stops. */
    @Override
    public void execute(Runnable task) {
        queue.add(Guarded.task(name, task, fatal));
        drainSoon();
    }

    /** Queues {@code task} after {@code delay}; cancelling the answer before then keeps it from running. */
    public Future<?> schedule(Runnable task, long delayNanos) {
        if (delayNanos <= 0) {
            CompletableFuture<Void> handle = new CompletableFuture<>();
            execute(() -> {
                if (!handle.isCancelled()) {
                    handle.complete(null);
                    task.run();
                }
            });
            return handle;
        }
        try {
            return scheduler.schedule(() -> execute(task), delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(null); // stopping: nothing runs any more
        }
    }

    /** Queues {@code task} every {@code periodNanos}, starting after one period, until the answer is cancelled. */
    public Future<?> every(Runnable task, long periodNanos) {
        return scheduler.scheduleWithFixedDelay(() -> execute(task), periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs {@code step} in this context and waits for its answer; from inside the context it runs at once. When no
     * thread is draining the queue, the caller drains it itself (as grpc-java's {@code SynchronizationContext}
     * does), so a call costs no thread handoff; tasks queued before {@code step} run first. A
     * {@link RuntimeException} it throws is thrown here.
     *
     * @throws IllegalStateException when the scheduler no longer runs tasks
     */
    public <T> T call(Supplier<T> step) {
        if (inContext()) {
            return step.get();
        }
        if (scheduler.isShutdown()) {
            throw closed();
        }
        CompletableFuture<T> answer = new CompletableFuture<>();
        queue.add(new Call(answer, () -> {
            try {
                answer.complete(step.get());
            } catch (Throwable e) {
                answer.completeExceptionally(e);
                if (e instanceof VirtualMachineError error) {
                    fatal.accept(error);
                    throw error;
                }
            }
        }));
        drain();
        try {
            return answer.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    /** Whether the calling thread is running this context's task now. */
    public boolean inContext() {
        return drainer.get() == Thread.currentThread();
    }

    /** Fails fast when state owned by this context is touched from outside it. */
    public void checkInContext() {
        if (!inContext()) {
            throw new IllegalStateException("not in the " + name + " context: " + Thread.currentThread().getName());
        }
    }

    private void drainSoon() {
        if (queue.isEmpty() || drainer.get() != null) {
            return;
        }
        try {
            scheduler.execute(this::drain);
        } catch (RejectedExecutionException e) {
            failQueued();
        }
    }

    private void drain() {
        Thread me = Thread.currentThread();
        while (true) {
            if (!drainer.compareAndSet(null, me)) {
                return; // another thread drains; it sees what was queued
            }
            try {
                for (Runnable task = queue.poll(); task != null; task = queue.poll()) {
                    task.run();
                }
            } finally {
                drainer.set(null);
            }
            if (queue.isEmpty()) {
                return;
            }
        }
    }

    /** The scheduler stopped: queued tasks never run; a caller waiting in {@link #call} is told so. */
    private void failQueued() {
        for (Runnable task = queue.poll(); task != null; task = queue.poll()) {
            if (task instanceof Call c) {
                c.answer.completeExceptionally(closed());
            }
        }
    }

    private IllegalStateException closed() {
        return new IllegalStateException(name + " is closed: its scheduler runs no more tasks");
    }

    /** A task whose caller waits for {@code answer}. */
    private record Call(CompletableFuture<?> answer, Runnable body) implements Runnable {
        @Override
        public void run() {
            body.run();
        }
    }
}
