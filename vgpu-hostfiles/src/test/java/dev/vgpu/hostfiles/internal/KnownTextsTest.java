package dev.vgpu.hostfiles.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The table of short ASCII texts the readers hand out again: equal texts, never a wrong one, under any load. */
class KnownTextsTest {

    private final KnownTexts texts = new KnownTexts();

    private String of(String text) {
        byte[] bytes = ("[" + text + "]").getBytes(StandardCharsets.ISO_8859_1);
        return texts.of(bytes, 1, bytes.length - 1);
    }

    @Test
    void theSameBytesGiveTheSameStringAndOtherBytesTheirOwn() {
        String first = of("0000:41:00.0");

        assertThat(first).isEqualTo("0000:41:00.0");
        assertThat(of("0000:41:00.0")).isSameAs(first);
        assertThat(of("0000:41:00.1")).isEqualTo("0000:41:00.1").isNotSameAs(first);
        assertThat(of("")).isEmpty();
        assertThat(of("x".repeat(KnownTexts.MAX_LENGTH))).isEqualTo("x".repeat(KnownTexts.MAX_LENGTH));
        String catalog = "1414 : NVIDIA H100-1-10C\n".repeat(40);
        assertThat(of(catalog)).isEqualTo(catalog).isSameAs(of(catalog));
        assertThat(of(catalog + "x")).isEqualTo(catalog + "x");
    }

    @Test
    void longOrNonAsciiTextsAreLeftToTheCaller() {
        byte[] utf8 = "GRID \u00e9".getBytes(StandardCharsets.UTF_8);

        assertThat(texts.of(utf8, 0, utf8.length)).isNull();
        assertThat(of("x".repeat(KnownTexts.MAX_LONG_LENGTH + 1))).isNull();
    }

    @Test
    void readersDecodeLikeBeforeWhateverTheTableHolds() {
        byte[] text = "  0x10de\n".getBytes(StandardCharsets.US_ASCII);

        assertThat(texts.decode(text, text.length, true)).isEqualTo("0x10de")
                .isSameAs(texts.decode(text, text.length, true));
        assertThat(texts.decode(text, text.length, false)).isEqualTo("  0x10de\n");
        byte[] odd = {'G', (byte) 0xff, '\n'};
        assertThat(texts.decode(odd, odd.length, true)).isEqualTo("G\ufffd");
    }

    @Test
    void farMoreTextsThanSlotsAreEachTheirOwn() {
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 100_000; i++) {
                String text = "0000:" + Integer.toHexString(i);
                assertThat(of(text)).isEqualTo(text);
                String list = (i + " : NVIDIA A16-1Q\n").repeat(3 + i % 5);
                assertThat(of(list)).isEqualTo(list);
            }
        }
    }

    @Test
    void threadsSharingTheTableNeverGetAnotherText() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int seed = t;
                Callable<Integer> task = () -> {
                    int wrong = 0;
                    for (int i = 0; i < 200_000; i++) {
                        // a few hundred texts, so that threads meet on the same slots, replaced and re-filled
                        String text = "f" + ((i * 7 + seed * 13) % 500);
                        if (!of(text).equals(text)) {
                            wrong++;
                        }
                    }
                    return wrong;
                };
                results.add(pool.submit(task));
            }
            for (Future<Integer> result : results) {
                assertThat(result.get(2, TimeUnit.MINUTES)).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
