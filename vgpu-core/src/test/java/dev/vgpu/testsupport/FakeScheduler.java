package dev.vgpu.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler whose time moves only when the test says so, after grpc-java's {@code FakeClock}: {@link #execute}
 * runs the task at once on the calling thread (so a manager's serial context drains on whoever posts), and delayed
 * or periodic tasks run in {@link #forward}, in time order, on the test's thread. Thread-safe: gRPC threads post too.
 * {@link #onOneThread()} makes one whose tasks all run on a thread of its own, one at a time, for an owner that must
 * not run on its callers' threads (a publisher whose HTTP callbacks post to it); {@code forward} then waits for each
 * task due. Shared by the modules' tests through vgpu-core's test jar.
 */
public final class FakeScheduler extends AbstractExecutorService implements ScheduledExecutorService {

    /** Where tasks run; null: on the thread that posts, or that moves the time. */
    private final java.util.concurrent.ExecutorService runner;
    private final PriorityQueue<Task> tasks = new PriorityQueue<>();
    private long now;
    private long sequence;
    private boolean shutdown;

    /** Tasks run on the thread that posts them, or that moves the time. */
    public FakeScheduler() {
        this(null);
    }

    private FakeScheduler(java.util.concurrent.ExecutorService runner) {
        this.runner = runner;
    }

    /** A scheduler whose tasks all run on one thread of its own, in the order they were posted or came due. */
    public static FakeScheduler onOneThread() {
        return new FakeScheduler(java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fake-scheduler");
            t.setDaemon(true);
            return t;
        }));
    }

    /** Runs every task due within {@code by}, in time order, then sets the clock to now + {@code by}. */
    public void forward(Duration by) {
        long target;
        synchronized (this) {
            target = now + by.toNanos();
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.at > target) {
                    now = target;
                    return;
                }
                tasks.poll();
                now = next.at;
            }
            if (!next.isCancelled()) {
                runDue(next.body);
                synchronized (this) {
                    if (next.period > 0 && !next.isCancelled() && !shutdown) {
                        next.at = now + next.period;
                        next.seq = sequence++;
                        tasks.add(next);
                    } else {
                        next.done = true;
                    }
                }
            }
        }
    }

    /** The delays from now of the tasks waiting (not cancelled), shortest first. */
    public synchronized List<Duration> pending() {
        List<Duration> out = new ArrayList<>();
        tasks.stream().filter(t -> !t.isCancelled()).sorted().forEach(t -> out.add(Duration.ofNanos(t.at - now)));
        return out;
    }

    @Override
    public void execute(Runnable command) {
        synchronized (this) {
            if (shutdown) {
                throw new RejectedExecutionException("shut down");
            }
        }
        if (runner == null) {
            command.run();
        } else {
            runner.execute(command);
        }
    }

    /** A due task: run here, or on the scheduler's thread and waited for. */
    private void runDue(Runnable body) {
        if (runner == null) {
            body.run();
            return;
        }
        try {
            runner.submit(body).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("a scheduled task failed", e.getCause());
        }
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(command, unit.toNanos(delay), 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("not used by the manager");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return add(command, unit.toNanos(initialDelay), unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return add(command, unit.toNanos(initialDelay), unit.toNanos(delay));
    }

    private synchronized Task add(Runnable command, long delayNanos, long periodNanos) {
        if (shutdown) {
            throw new RejectedExecutionException("shut down");
        }
        Task task = new Task(command, now + Math.max(0, delayNanos), periodNanos, sequence++);
        tasks.add(task);
        return task;
    }

    @Override
    public synchronized void shutdown() {
        shutdown = true;
        if (runner != null) {
            runner.shutdown();
        }
    }

    @Override
    public synchronized List<Runnable> shutdownNow() {
        shutdown = true;
        if (runner != null) {
            runner.shutdownNow();
        }
        List<Runnable> left = tasks.stream().map(t -> t.body).toList();
        tasks.clear();
        return left;
    }

    @Override
    public synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public synchronized boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isTerminated();
    }

    /** One waiting task; ordered by due time, then by when it was added. */
    private final class Task implements ScheduledFuture<Void> {
        final Runnable body;
        final long period;
        long at;
        long seq;
        boolean done;
        private boolean cancelled;

        Task(Runnable body, long at, long period, long seq) {
            this.body = body;
            this.at = at;
            this.period = period;
            this.seq = seq;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            synchronized (FakeScheduler.this) {
                return unit.convert(at - now, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public int compareTo(Delayed other) {
            Task o = (Task) other;
            return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            synchronized (FakeScheduler.this) {
                if (done) {
                    return false;
                }
                cancelled = true;
                tasks.remove(this);
                return true;
            }
        }

        @Override
        public boolean isCancelled() {
            synchronized (FakeScheduler.this) {
                return cancelled;
            }
        }

        @Override
        public boolean isDone() {
            synchronized (FakeScheduler.this) {
                return done || cancelled;
            }
        }

        @Override
        public Void get() {
            throw new UnsupportedOperationException("not used by the manager");
        }

        @Override
        public Void get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("not used by the manager");
        }
    }
}
