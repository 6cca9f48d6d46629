package dev.vgpu.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Outside text in one log line or status description: escaped, never a second line, cut. */
class PrintableTest {

    static Stream<Arguments> escapes() {
        return Stream.of(
                arguments("0000:41:00.0", "0000:41:00.0"),
                arguments("a\u0000b", "a\\u0000b"),
                arguments("x\ny", "x\\ny"),
                arguments("x\r\ny", "x\\r\\ny"),
                arguments("x\ty", "x\\ty"),
                arguments("back\\slash", "back\\\\slash"),
                arguments("esc\u001b[31m", "esc\\u001b[31m"),
                arguments("del\u007f nel\u0085", "del\\u007f nel\\u0085"),
                arguments("line\u2028para\u2029", "line\\u2028para\\u2029"),
                arguments("GRID T4-1Q \u00fc \u20ac", "GRID T4-1Q \u00fc \u20ac"),
                // Bidirectional overrides and isolates would make a terminal show the line in another order.
                arguments("0000:41:00.0\u202e0.00:14", "0000:41:00.0\\u202e0.00:14"),
                arguments("a\u2066b\u2067c\u2068d\u2069e", "a\\u2066b\\u2067c\\u2068d\\u2069e"),
                arguments("rtl\u200fmark\u200bzero\ufeffbom", "rtl\\u200fmark\\u200bzero\\ufeffbom"),
                // A format character beyond the BMP (a language tag) is one escape, not two surrogate escapes.
                arguments("tag\udb40\udc01", "tag\\U000e0001"));
    }

    @ParameterizedTest(name = "[{index}] escaped as {1}")
    @MethodSource("escapes")
    void escapesWhatCouldBreakALine(String input, String expected) {
        assertThat(Printable.of(input)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0} is plain exactly when nothing in it is escaped")
    @MethodSource("escapes")
    void plainMeansNothingEscaped(String input, String escaped) {
        assertThat(Printable.isPlain(input)).isEqualTo(Printable.of(input, input.length()).equals(input))
                .isEqualTo(input.equals(escaped));
    }

    @ParameterizedTest(name = "[{index}] plain exactly when nothing is escaped")
    @MethodSource("surrogatesAndLengths")
    void plainMeansNothingEscapedForSurrogatesAndLongText(String text) {
        assertThat(Printable.isPlain(text)).as(text).isEqualTo(Printable.of(text, text.length()).equals(text));
    }

    static Stream<String> surrogatesAndLengths() {
        return Stream.of("", "\ud83d\ude00 emoji pair", "lone \ud83d high", "lone \ude00 low", "end high \ud83d",
                "x".repeat(300));
    }

    @Test
    void cutsLongTextAndSaysSo() {
        assertThat(Printable.of("x".repeat(4_000_000))).isEqualTo("x".repeat(80) + "…");
        assertThat(Printable.of("x".repeat(80))).isEqualTo("x".repeat(80));
        assertThat(Printable.of("abcdef", 3)).isEqualTo("abc…");
    }

    @Test
    void neverSplitsASurrogatePairAndEscapesALoneHalf() {
        String emoji = "\ud83d\ude00";
        assertThat(Printable.of("ab" + emoji, 3)).isEqualTo("ab…");
        assertThat(Printable.of(emoji + "z", 2)).isEqualTo(emoji + "…");
        assertThat(Printable.of("a\ud83db")).isEqualTo("a\\ud83db");
    }

    @Test
    void nullIsSaidAsNull() {
        assertThat(Printable.of(null)).isEqualTo("null");
    }

    @Test
    void theResultIsOneLineWhateverTheInput() {
        StringBuilder every = new StringBuilder();
        for (char c = 0; c < 0x3000; c++) {
            every.append(c);
        }
        String out = Printable.of(every.toString(), Integer.MAX_VALUE);
        assertThat(out).doesNotContain("\n", "\r", "\u0085", "\u2028", "\u2029", "\u000b", "\u000c");
        assertThat(out.chars()).noneMatch(c -> c < 0x20 || (c >= 0x7f && c <= 0x9f)
                || Character.getType(c) == Character.FORMAT);
    }
}
