package dev.vgpu.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Durations#parseGo} and its printing counterpart {@link GoDurations#format} against Go.
 *
 * <p>Where the expected values come from: the semantics are Go's {@code time.ParseDuration} and
 * {@code Duration.String} as summarized in docs/HOST-FACTS.md §7. The inputs are Go's own tables
 * ({@code parseDurationTests}, {@code parseDurationErrorTests} and {@code durationTests} in Go's
 * {@code src/time/time_test.go}) plus our own edge cases (sign and fraction forms, long fractions, the
 * {@code leadingFraction} limits, overflow bounds, Unicode in units, hostile characters). Every expected value,
 * every {@code String()} output and every error message in these tables was produced by running Go 1.19.8's
 * {@code time} package (Debian package {@code golang-1.19-go}) on exactly these inputs; nothing was
 * computed by the code under test. Go 1.19's ParseDuration is the same code as Go's current one.
 */
class DurationsTest {

    /** An input Go accepts: its value in nanoseconds and Go's {@code Duration.String()} of that value. */
    static Arguments valid(String input, long nanos, String goString) {
        return Arguments.of(input, nanos, goString);
    }

    /** An input Go rejects, with Go's exact error text. */
    static Arguments invalid(String input, String goError) {
        return Arguments.of(input, goError);
    }

    static Stream<Arguments> validInputs() {
        return Stream.of(
                // Go's parseDurationTests, in its order
                valid("0", 0L, "0s"),
                valid("+0", 0L, "0s"),
                valid("-0", 0L, "0s"),
                valid("5s", 5000000000L, "5s"),
                valid("30s", 30000000000L, "30s"),
                valid("1478s", 1478000000000L, "24m38s"),
                valid("-5s", -5000000000L, "-5s"),
                valid("+5s", 5000000000L, "5s"),
                valid("5.0s", 5000000000L, "5s"),
                valid("5.6s", 5600000000L, "5.6s"),
                valid("5.s", 5000000000L, "5s"),
                valid(".5s", 500000000L, "500ms"),
                valid("1.0s", 1000000000L, "1s"),
                valid("1.00s", 1000000000L, "1s"),
                valid("1.004s", 1004000000L, "1.004s"),
                valid("1.0040s", 1004000000L, "1.004s"),
                valid("100.00100s", 100001000000L, "1m40.001s"),
                valid("10ns", 10L, "10ns"),
                valid("11us", 11000L, "11\u00b5s"),
                valid("12\u00b5s", 12000L, "12\u00b5s"),
                valid("12\u03bcs", 12000L, "12\u00b5s"),
                valid("13ms", 13000000L, "13ms"),
                valid("14s", 14000000000L, "14s"),
                valid("15m", 900000000000L, "15m0s"),
                valid("16h", 57600000000000L, "16h0m0s"),
                valid("3h30m", 12600000000000L, "3h30m0s"),
                valid("10.5s4m", 250500000000L, "4m10.5s"),
                valid("-2m3.4s", -123400000000L, "-2m3.4s"),
                valid("1h2m3s4ms5us6ns", 3723004005006L, "1h2m3.004005006s"),
                valid("39h9m14.425s", 140954425000000L, "39h9m14.425s"),
                valid("52763797000ns", 52763797000L, "52.763797s"),
                valid("0.3333333333333333333h", 1200000000000L, "20m0s"),
                valid("9007199254740993ns", 9007199254740993L, "2501h59m59.254740993s"),
                valid("9223372036854775807ns", 9223372036854775807L, "2562047h47m16.854775807s"),
                valid("9223372036854775.807us", 9223372036854775807L, "2562047h47m16.854775807s"),
                valid("9223372036s854ms775us807ns", 9223372036854775807L, "2562047h47m16.854775807s"),
                valid("-9223372036854775808ns", -9223372036854775808L, "-2562047h47m16.854775808s"),
                valid("-9223372036854775.808us", -9223372036854775808L, "-2562047h47m16.854775808s"),
                valid("-9223372036s854ms775us808ns", -9223372036854775808L, "-2562047h47m16.854775808s"),
                valid("-2562047h47m16.854775808s", -9223372036854775808L, "-2562047h47m16.854775808s"),
                valid("0.100000000000000000000h", 360000000000L, "6m0s"),
                valid("0.830103483285477580700h", 2988372539827L, "49m48.372539827s"),
                // our additions: long fractions lose precision, never fail
                valid("1.0000000000000000001s", 1000000000L, "1s"),
                valid("0.9999999999999999999s", 1000000000L, "1s"),
                // forms from docs/HOST-FACTS.md §7 (the ones the upstream rescan change documents)
                valid("1.5h", 5400000000000L, "1h30m0s"),
                valid("1h2m3.5s", 3723500000000L, "1h2m3.5s"),
                valid("1m1m", 120000000000L, "2m0s"),
                valid("300ms", 300000000L, "300ms"),
                valid("2h45m", 9900000000000L, "2h45m0s"),
                valid("-1.5h", -5400000000000L, "-1h30m0s"),
                valid("00010s", 10000000000L, "10s"),
                valid("1.s", 1000000000L, "1s"),
                valid("1h1h1h", 10800000000000L, "3h0m0s"),
                valid("0s", 0L, "0s"),
                valid("0.0s", 0L, "0s"),
                valid("-0s", 0L, "0s"),
                valid("+.5s", 500000000L, "500ms"),
                valid("0.000000001s", 1L, "1ns"),
                valid("0.0000000009s", 0L, "0s"),
                valid("1.9999999999s", 1999999999L, "1.999999999s"),
                valid("1.5\u00b5s", 1500L, "1.5\u00b5s"),
                valid("0.5ns", 0L, "0s"),
                valid("2562047h47m16.854775807s", 9223372036854775807L, "2562047h47m16.854775807s"),
                // leadingFraction keeps digits while the value stays <= 2^63, then drops the rest
                valid("0.9223372036854775808ns", 0L, "0s"),
                valid("0.92233720368547758089h", 3320413933267L, "55m20.413933267s"),
                valid("0.922337203685477580h", 3320413933267L, "55m20.413933267s"),
                // Go adds the components in uint64: 2^63 + 2^63 wraps to 0 and passes its "> 2^63" check.
                // A Go quirk, reproduced because the contract is "exactly Go" (the rescan policy reads 0 as off).
                valid("9223372036854775808ns9223372036854775808ns", 0L, "0s")
        );
    }

    @ParameterizedTest(name = "[{index}] \"{0}\" = {1} ns")
    @MethodSource("validInputs")
    void parsesLikeGo(String input, long nanos, String goString) {
        assertThat(Durations.parseGoNanos(input)).isEqualTo(nanos);
        assertThat(Durations.parseGo(input)).isEqualTo(Duration.ofNanos(nanos));
    }

    @ParameterizedTest(name = "[{index}] {1} ns prints as {2}")
    @MethodSource("validInputs")
    void formatsLikeGo(String input, long nanos, String goString) {
        assertThat(GoDurations.format(Duration.ofNanos(nanos))).isEqualTo(goString);
        // what Go prints, Go parses back to the same value
        assertThat(Durations.parseGoNanos(goString)).isEqualTo(nanos);
    }

    static Stream<Arguments> invalidInputs() {
        return Stream.of(
                // Go's parseDurationErrorTests (the inputs that are valid Java strings), then ours
                invalid("", "time: invalid duration \"\""),
                invalid("3", "time: missing unit in duration \"3\""),
                invalid("-", "time: invalid duration \"-\""),
                invalid("+", "time: invalid duration \"+\""),
                invalid("s", "time: invalid duration \"s\""),
                invalid(".", "time: invalid duration \".\""),
                invalid("-.", "time: invalid duration \"-.\""),
                invalid(".s", "time: invalid duration \".s\""),
                invalid("+.s", "time: invalid duration \"+.s\""),
                // units are case-sensitive and limited to ns us µs μs ms s m h; no spaces anywhere
                invalid("1d", "time: unknown unit \"d\" in duration \"1d\""),
                invalid("30", "time: missing unit in duration \"30\""),
                invalid("30 s", "time: unknown unit \" s\" in duration \"30 s\""),
                invalid(" 30s", "time: invalid duration \" 30s\""),
                invalid("30s ", "time: unknown unit \"s \" in duration \"30s \""),
                invalid("30S", "time: unknown unit \"S\" in duration \"30S\""),
                invalid("1e3s", "time: unknown unit \"e\" in duration \"1e3s\""),
                invalid("1H", "time: unknown unit \"H\" in duration \"1H\""),
                invalid("1sec", "time: unknown unit \"sec\" in duration \"1sec\""),
                invalid("1w", "time: unknown unit \"w\" in duration \"1w\""),
                invalid("0x10s", "time: unknown unit \"x\" in duration \"0x10s\""),
                invalid("1_000s", "time: unknown unit \"_\" in duration \"1_000s\""),
                invalid("--5s", "time: invalid duration \"--5s\""),
                invalid("+-5s", "time: invalid duration \"+-5s\""),
                invalid("5s-", "time: unknown unit \"s-\" in duration \"5s-\""),
                invalid("1.2.3s", "time: missing unit in duration \"1.2.3s\""),
                invalid("1..2s", "time: missing unit in duration \"1..2s\""),
                // Go quotes control and non-ASCII characters as \xNN escapes of their UTF-8 bytes
                invalid("5\u0000s", "time: unknown unit \"\\x00s\" in duration \"5\\x00s\""),
                invalid("5s\n", "time: unknown unit \"s\\x0a\" in duration \"5s\\x0a\""),
                invalid("\u00095s", "time: invalid duration \"\\x095s\""),
                invalid("\u00b5s", "time: invalid duration \"\\xc2\\xb5s\""),
                invalid("1\u00b5", "time: unknown unit \"\\xc2\\xb5\" in duration \"1\\xc2\\xb5\""),
                invalid("1\u03bc", "time: unknown unit \"\\xce\\xbc\" in duration \"1\\xce\\xbc\""),
                invalid("1us5", "time: missing unit in duration \"1us5\""),
                // int64 overflow
                invalid("9223372036854775810ns", "time: invalid duration \"9223372036854775810ns\""),
                invalid("9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""),
                invalid("-9223372036854775809ns", "time: invalid duration \"-9223372036854775809ns\""),
                invalid("9223372036854776us", "time: invalid duration \"9223372036854776us\""),
                invalid("3000000h", "time: invalid duration \"3000000h\""),
                invalid("9223372036854775.808us", "time: invalid duration \"9223372036854775.808us\""),
                // the fraction takes the component past 2^63 (Go's "v > 1<<63" after adding it; .808 reaches 2^63 exactly
                // and is valid negated, above): not run through Go 1.19.8 like the rest, read off its ParseDuration
                invalid("9223372036854775.809us", "time: invalid duration \"9223372036854775.809us\""),
                invalid("-9223372036854775.809us", "time: invalid duration \"-9223372036854775.809us\""),
                invalid("9223372036854ms775us808ns", "time: invalid duration \"9223372036854ms775us808ns\""),
                invalid("99999999999999999999s", "time: invalid duration \"99999999999999999999s\""),
                invalid("1\"s", "time: unknown unit \"\\\"s\" in duration \"1\\\"s\""),
                invalid("1\\s", "time: unknown unit \"\\\\s\" in duration \"1\\\\s\""),
                invalid("1\u65e5", "time: unknown unit \"\\xe6\\x97\\xa5\" in duration \"1\\xe6\\x97\\xa5\""),
                invalid("1\u00a0s", "time: unknown unit \"\\xc2\\xa0s\" in duration \"1\\xc2\\xa0s\""),
                invalid("\u0663s", "time: invalid duration \"\\xd9\\xa3s\""),
                invalid("\ufffd", "time: invalid duration \"\\xef\\xbf\\xbd\""),
                invalid("1s\u007f", "time: unknown unit \"s\u007f\" in duration \"1s\u007f\""),
                invalid("-9223372036854775808ns1ns", "time: invalid duration \"-9223372036854775808ns1ns\""),
                invalid("2562047h47m16.854775808s", "time: invalid duration \"2562047h47m16.854775808s\""),
                invalid("2562048h", "time: invalid duration \"2562048h\""),
                invalid("-2562048h", "time: invalid duration \"-2562048h\""),
                invalid("1s\ud83d\ude42", "time: unknown unit \"s\\xf0\\x9f\\x99\\x82\" in duration \"1s\\xf0\\x9f\\x99\\x82\"")
        );
    }

    @ParameterizedTest(name = "[{index}] \"{0}\" -> {1}")
    @MethodSource("invalidInputs")
    void rejectsWithGosMessage(String input, String goError) {
        assertThatThrownBy(() -> Durations.parseGoNanos(input))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(goError);
        assertThatThrownBy(() -> Durations.parseGo(input)).hasMessage(goError);
    }

    @Test
    void nullIsInvalid() {
        assertThatThrownBy(() -> Durations.parseGo(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("time: invalid duration \"null\"");
    }

    @Test
    void theInt64BoundsAreGos() {
        assertThat(Durations.parseGoNanos("9223372036854775807ns")).isEqualTo(Long.MAX_VALUE);
        assertThat(Durations.parseGoNanos("-9223372036854775808ns")).isEqualTo(Long.MIN_VALUE);
        assertThatThrownBy(() -> Durations.parseGoNanos("9223372036854775808ns"))
                .hasMessage("time: invalid duration \"9223372036854775808ns\"");
        assertThatThrownBy(() -> Durations.parseGoNanos("-9223372036854775809ns"))
                .hasMessage("time: invalid duration \"-9223372036854775809ns\"");
    }

    @Test
    void aVeryLongInputIsQuotedWhole() {
        String input = "1".repeat(5_000) + "s";

        assertThatThrownBy(() -> Durations.parseGo(input)).hasMessage("time: invalid duration \"" + input + "\"");
    }

    static Stream<Arguments> goDurationStrings() {
        // Go's durationTests table (src/time/time_test.go), outputs confirmed with Go 1.19.8
        return Stream.of(
                Arguments.of(0L, "0s"),
                Arguments.of(1L, "1ns"),
                Arguments.of(1_100L, "1.1\u00b5s"),
                Arguments.of(2_200_000L, "2.2ms"),
                Arguments.of(3_300_000_000L, "3.3s"),
                Arguments.of(245_000_000_000L, "4m5s"),
                Arguments.of(245_001_000_000L, "4m5.001s"),
                Arguments.of(18_367_001_000_000L, "5h6m7.001s"),
                Arguments.of(480_000_000_001L, "8m0.000000001s"),
                Arguments.of(Long.MAX_VALUE, "2562047h47m16.854775807s"),
                Arguments.of(Long.MIN_VALUE, "-2562047h47m16.854775808s"),
                // more, also printed by Go 1.19.8
                Arguments.of(999L, "999ns"),
                Arguments.of(1_000L, "1\u00b5s"),
                Arguments.of(999_999L, "999.999\u00b5s"),
                Arguments.of(1_234_567L, "1.234567ms"),
                Arguments.of(999_999_999L, "999.999999ms"),
                Arguments.of(3_600_000_000_000L, "1h0m0s"),
                Arguments.of(3_601_000_000_000L, "1h0m1s"),
                Arguments.of(86_400_000_000_000L, "24h0m0s"),
                Arguments.of(90_000_000_000L, "1m30s"),
                Arguments.of(-1L, "-1ns"),
                Arguments.of(-1_500L, "-1.5\u00b5s"),
                Arguments.of(-5_000_000_000L, "-5s"));
    }

    @ParameterizedTest(name = "{0} ns -> {1}")
    @MethodSource("goDurationStrings")
    void formatGoMatchesGosDurationString(long nanos, String expected) {
        assertThat(GoDurations.format(Duration.ofNanos(nanos))).isEqualTo(expected);
    }

    @Test
    void formatGoHandlesDurationsBeyondGosRange() {
        assertThat(GoDurations.format(Duration.ofHours(3_000_000))).isEqualTo("3000000h0m0s");
        assertThat(GoDurations.format(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo("-2562047788015215h30m8s");
        assertThat(GoDurations.format(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)))
                .isEqualTo("2562047788015215h30m7.999999999s");
    }
}
