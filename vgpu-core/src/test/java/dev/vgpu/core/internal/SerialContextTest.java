package dev.vgpu.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.testsupport.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The serial context that owns the adapter's state: one task at a time, in order, time only from its scheduler. */
class SerialContextTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void tasksPostedFromManyThreadsRunOneAtATimeEachThreadsInTheOrderItPostedThem() throws Exception {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(4);
        ExecutorService posters = Executors.newFixedThreadPool(8);
        try {
            SerialContext context = new SerialContext("test", scheduler);
            int threads = 8;
            int each = 20_000;
            // Owned by the context: plain fields, no lock, as the manager's state is.
            int[] running = {0};
            int[] overlaps = {0};
            List<List<Integer>> seen = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                seen.add(new ArrayList<>());
            }
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int poster = t;
                done.add(posters.submit(() -> {
                    go.await();
                    for (int i = 0; i < each; i++) {
                        int n = i;
                        context.execute(() -> {
                            if (running[0]++ != 0) {
                                overlaps[0]++;
                            }
                            seen.get(poster).add(n);
                            running[0]--;
                        });
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
            // A call is queued after everything posted before it, so its answer sees all of it.
            List<List<Integer>> result = context.call(() -> seen.stream().map(List::copyOf).toList());
            assertThat(context.call(() -> overlaps[0])).isZero();
            for (List<Integer> one : result) {
                assertThat(one).hasSize(each).isSorted();
            }
        } finally {
            posters.shutdownNow();
            scheduler.shutdownNow();
        }
    }

    @Test
    void aCallFromInsideTheContextRunsAtOnce() {
        FakeScheduler scheduler = new FakeScheduler();
        SerialContext context = new SerialContext("test", scheduler);
        List<String> order = new ArrayList<>();

        String answer = context.call(() -> {
            assertThat(context.inContext()).isTrue();
            order.add("outer");
            return context.call(() -> {
                order.add("inner");
                return "inner ran inside";
            });
        });

        assertThat(answer).isEqualTo("inner ran inside");
        assertThat(order).containsExactly("outer", "inner");
        assertThat(context.inContext()).isFalse();
        assertThatThrownBy(context::checkInContext).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not in the test context");
    }

    @Test
    void aDelayedTaskRunsWhenTheSchedulersClockReachesItAndNeverOnceCancelled() {
        FakeScheduler scheduler = new FakeScheduler();
        SerialContext context = new SerialContext("test", scheduler);
        List<String> ran = new ArrayList<>();
        context.schedule(() -> ran.add("after 2 s"), Duration.ofSeconds(2).toNanos());
        Future<?> cancelled = context.schedule(() -> ran.add("cancelled"), Duration.ofSeconds(1).toNanos());
        Future<?> now = context.schedule(() -> ran.add("now"), 0);
        context.every(() -> ran.add("every 5 s"), Duration.ofSeconds(5).toNanos());

        assertThat(ran).containsExactly("now");
        assertThat(now.isDone()).isTrue();
        cancelled.cancel(false);
        scheduler.forward(Duration.ofMillis(1_999));
        assertThat(ran).containsExactly("now");
        scheduler.forward(Duration.ofMillis(1));
        assertThat(ran).containsExactly("now", "after 2 s");
        scheduler.forward(Duration.ofSeconds(8));
        assertThat(ran).containsExactly("now", "after 2 s", "every 5 s", "every 5 s");
    }

    @Test
    void onceItsSchedulerStopsACallSaysTheContextIsClosedAndPostsAreDropped() {
        FakeScheduler scheduler = new FakeScheduler();
        SerialContext context = new SerialContext("device-plugin state", scheduler);
        scheduler.shutdownNow();

        context.execute(() -> {
            throw new AssertionError("must not run");
        });
        assertThatThrownBy(() -> context.call(() -> "never")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("device-plugin state is closed");
    }
}
