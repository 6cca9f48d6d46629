package dev.vgpu.hostfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ScanScopeTest {

    record Key(int n) {
    }

    record OtherKey(int n) {
    }

    record Answer(String text) {
    }

    /** The scope's value for {@code Key(n)}, or a new {@code Answer(text)} when it has none. */
    static Answer valueOf(ScanScope scope, int n, String text) {
        return scope.computeIfAbsent(new Key(n), k -> new Answer(text));
    }

    @Test
    void freshScopeComputesAKeyOnceAndHandsEveryoneTheSameValue() {
        ScanScope scope = ScanScope.fresh();
        AtomicInteger computed = new AtomicInteger();

        Answer first = scope.computeIfAbsent(new Key(1), k -> new Answer("one#" + computed.incrementAndGet()));
        Answer again = scope.computeIfAbsent(new Key(1), k -> new Answer("one#" + computed.incrementAndGet()));
        Answer other = scope.computeIfAbsent(new Key(2), k -> new Answer("two#" + computed.incrementAndGet()));

        assertThat(again).isSameAs(first).isEqualTo(new Answer("one#1"));
        assertThat(other).isEqualTo(new Answer("two#2"));
        assertThat(computed).hasValue(2);
    }

    @Test
    void keysOfDifferentTypesNeverMeetEvenWithEqualContents() {
        ScanScope scope = ScanScope.fresh();

        scope.computeIfAbsent(new Key(7), k -> new Answer("key"));
        Answer other = scope.computeIfAbsent(new OtherKey(7), k -> new Answer("other key"));

        assertThat(other).isEqualTo(new Answer("other key"));
    }

    @Test
    void noneKeepsNothing() {
        ScanScope scope = ScanScope.none();
        AtomicInteger computed = new AtomicInteger();

        for (int i = 0; i < 3; i++) {
            scope.computeIfAbsent(new Key(1), k -> computed.incrementAndGet());
        }

        assertThat(computed).hasValue(3);
        assertThat(ScanScope.none()).isSameAs(scope);
    }

    @Test
    void aFailedComputationKeepsNothingAndTheNextCallComputesAgain() {
        ScanScope scope = ScanScope.fresh();

        assertThatThrownBy(() -> scope.computeIfAbsent(new Key(1), k -> {
            throw new UncheckedIOException(new IOException("driver link vanished"));
        })).isInstanceOf(UncheckedIOException.class).hasMessageContaining("driver link vanished");

        assertThat(valueOf(scope, 1, "second try")).isEqualTo(new Answer("second try"));
    }

    @Test
    void nullKeysAndNullValuesAreRejectedInEveryScope() {
        for (ScanScope scope : List.of(ScanScope.fresh(), ScanScope.none())) {
            assertThatThrownBy(() -> scope.computeIfAbsent(null, k -> "x")).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("key");
            assertThatThrownBy(() -> scope.computeIfAbsent(new Key(3), k -> null))
                    .isInstanceOf(NullPointerException.class).hasMessageContaining("Key[n=3]")
                    .hasMessageContaining("null");
        }
    }

    @Test
    void aComputationMayUseTheScopeForOtherKeysButNotForItsOwn() {
        ScanScope scope = ScanScope.fresh();

        Answer outer = scope.computeIfAbsent(new Key(1),
                k -> new Answer("outer of " + scope.computeIfAbsent(new Key(2), k2 -> new Answer("inner")).text()));

        assertThat(outer).isEqualTo(new Answer("outer of inner"));
        assertThat(valueOf(scope, 2, "recomputed")).isEqualTo(new Answer("inner"));
        assertThatThrownBy(() -> scope.computeIfAbsent(new Key(9), k -> scope.computeIfAbsent(new Key(9), k2 -> "x")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("Key[n=9]");
    }

    @Test
    void racingThreadsComputeEachKeyOnceAndAllSeeTheSameValue() throws Exception {
        int threads = 8;
        int keys = 32;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 200; round++) {
                ScanScope scope = ScanScope.fresh();
                Map<Key, AtomicInteger> computations = new ConcurrentHashMap<>();
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<List<Answer>>> seen = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int offset = t;
                    seen.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        List<Answer> answers = new ArrayList<>();
                        for (int i = 0; i < keys; i++) {
                            Key key = new Key((i + offset) % keys); // threads start on different keys, then overlap
                            answers.add(scope.computeIfAbsent(key, k -> {
                                computations.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
                                return new Answer("value of " + k.n());
                            }));
                        }
                        answers.sort((a, b) -> a.text().compareTo(b.text()));
                        return answers;
                    }));
                }
                List<Answer> reference = seen.get(0).get(30, TimeUnit.SECONDS);
                for (Future<List<Answer>> answers : seen) {
                    List<Answer> mine = answers.get(30, TimeUnit.SECONDS);
                    assertThat(mine).hasSize(keys);
                    for (int i = 0; i < keys; i++) {
                        assertThat(mine.get(i)).isSameAs(reference.get(i));
                    }
                }
                assertThat(computations).hasSize(keys);
                assertThat(computations.values()).allSatisfy(count -> assertThat(count).hasValue(1));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aSlowComputationBlocksOnlyCallersOfItsOwnKey() throws Exception {
        ScanScope scope = ScanScope.fresh();
        CountDownLatch slowStarted = new CountDownLatch(1);
        CountDownLatch otherKeyDone = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Answer> slow = pool.submit(() -> scope.computeIfAbsent(new Key(1), k -> {
                slowStarted.countDown();
                try {
                    // finishes only once another key was computed meanwhile; a scope-wide lock would never get there
                    return new Answer(otherKeyDone.await(30, TimeUnit.SECONDS) ? "slow" : "blocked");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return new Answer("interrupted");
                }
            }));
            assertThat(slowStarted.await(30, TimeUnit.SECONDS)).isTrue();

            assertThat(valueOf(scope, 2, "fast")).isEqualTo(new Answer("fast"));
            otherKeyDone.countDown();

            assertThat(slow.get(30, TimeUnit.SECONDS)).isEqualTo(new Answer("slow"));
            assertThat(valueOf(scope, 1, "again")).isEqualTo(new Answer("slow"));
        } finally {
            pool.shutdownNow();
        }
    }
}
