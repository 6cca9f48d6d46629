package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A key that keeps its own outcome: one read per scope for all equal keys, a fresh one per ask without a scope. */
class SharedReadTest {

    @TempDir
    Path tmp;

    /** Fails its first read, answers its name after that; equal by name. */
    static final class Flaky extends SharedRead.Memo<String> {
        final String name;
        int reads;

        Flaky(String name) {
            this.name = name;
        }

        @Override
        String read() throws IOException {
            if (++reads == 1) {
                throw new NoSuchFileException(name);
            }
            return name;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Flaky f && f.name.equals(name);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }
    }

    @Test
    void aScopeReadsOnceAndAnswersEveryEqualKeyWithTheFirstOutcome() throws IOException {
        Host scan = Host.of(tmp).forScan();
        Flaky first = new Flaky("driver");
        Flaky second = new Flaky("driver");

        assertThatThrownBy(() -> SharedRead.once(scan, first)).isInstanceOf(NoSuchFileException.class)
                .hasMessage("driver");
        assertThatThrownBy(() -> SharedRead.once(scan, second)).isInstanceOf(NoSuchFileException.class);
        assertThat(first.reads).isEqualTo(1);
        assertThat(second.reads).as("an equal key is answered with the filled one").isZero();
        assertThatThrownBy(() -> SharedRead.once(scan, first)).isInstanceOf(NoSuchFileException.class);
        assertThat(first.reads).isEqualTo(1);

        // The next scan reads afresh.
        Flaky next = new Flaky("driver");
        next.reads = 1; // its first read answers
        assertThat(SharedRead.once(Host.of(tmp).forScan(), next)).isEqualTo("driver");
    }

    @Test
    void aReadThatAnswersNullIsKeptAsAnAnswer() throws IOException {
        Host scan = Host.of(tmp).forScan();
        int[] reads = {0};
        SharedRead.Memo<String> unbound = new SharedRead.Memo<>() {
            @Override
            String read() {
                reads[0]++;
                return null; // no driver bound
            }
        };
        assertThat(SharedRead.once(scan, unbound)).isNull();
        assertThat(SharedRead.once(scan, unbound)).isNull();
        assertThat(reads[0]).as("null is an answer, not \"not read yet\"").isEqualTo(1);
    }

    @Test
    void withoutAScopeTheSameKeyReadsAgainAndForgetsItsLastFailure() throws IOException {
        Host unscoped = Host.of(tmp);
        Flaky key = new Flaky("vendor");

        assertThatThrownBy(() -> SharedRead.once(unscoped, key)).isInstanceOf(NoSuchFileException.class);
        assertThat(SharedRead.once(unscoped, key)).isEqualTo("vendor");
        assertThat(key.reads).isEqualTo(2);
    }
}
