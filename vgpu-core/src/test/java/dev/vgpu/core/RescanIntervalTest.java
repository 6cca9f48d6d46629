package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.internal.GoText;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rescan-interval policy of docs/ARCHITECTURE.md ("Contracts kept by the daemon") on top of Go durations: unset, empty, blank or zero
 * disables; positive below 5 s is raised to 5 s; negative or malformed is an error quoting the input. Blank is
 * judged as Go's {@code strings.TrimSpace} does: the value is trimmed before parsing (docs/HOST-FACTS.md §7).
 */
class RescanIntervalTest {

    @ParameterizedTest(name = "\"{0}\" disables rescans")
    @NullAndEmptySource
    @ValueSource(strings = {" ", "   ", "\t\n", "\u00a0", "\u3000", "0", " 0 ", "+0", "-0", "0s", "0.0h", "-0s",
            "0ns", "0.0000000001s"})
    void unsetBlankOrZeroDisables(String raw) {
        RescanInterval interval = RescanInterval.parse(raw);

        assertThat(interval).isEqualTo(RescanInterval.DISABLED);
        assertThat(interval.enabled()).isFalse();
        assertThat(interval.period()).isZero();
    }

    @ParameterizedTest(name = "\"{0}\" -> {1} ms, raised from {2}")
    @CsvSource(delimiter = '|', nullValues = "NONE", value = {
            "1s          | 5000    | 1000",
            "1ns         | 5000    | 0",
            "4.999s      | 5000    | 4999",
            "500ms       | 5000    | 500",
            "5s          | 5000    | NONE",
            "30s         | 30000   | NONE",
            "'  30s  '   | 30000   | NONE",
            "1m30s       | 90000   | NONE",
            "1h          | 3600000 | NONE",
            "+10s        | 10000   | NONE",
            "5.001s      | 5001    | NONE",
    })
    void positiveValuesRunAndShortOnesAreRaised(String raw, long periodMillis, Long raisedFromMillis) {
        RescanInterval interval = RescanInterval.parse(raw);

        assertThat(interval.enabled()).isTrue();
        assertThat(interval.period()).isEqualTo(Duration.ofMillis(periodMillis));
        if (raisedFromMillis == null) {
            assertThat(interval.raisedFrom()).isEmpty();
        } else {
            assertThat(interval.raisedFrom()).hasValueSatisfying(
                    d -> assertThat(d.toMillis()).isEqualTo(raisedFromMillis));
        }
    }

    @Test
    void oneNanosecondIsRaisedAndRemembered() {
        assertThat(RescanInterval.parse("1ns"))
                .isEqualTo(new RescanInterval(Duration.ofSeconds(5), Optional.of(Duration.ofNanos(1))));
    }

    @Test
    void goUnicodeSpacesAroundTheValueAreTrimmed() {
        assertThat(RescanInterval.parse("\u00a030s\u3000\u2003").period()).isEqualTo(Duration.ofSeconds(30));
        assertThat(RescanInterval.parse("\u0085 1m \u000b").period()).isEqualTo(Duration.ofMinutes(1));
    }

    @ParameterizedTest(name = "\"{0}\" is rejected as negative")
    @ValueSource(strings = {"-5s", "-1ns", "-1h", " -30s ", "-0.5s", "-9223372036854775808ns"})
    void negativeValuesAreErrorsQuotingTheInput(String raw) {
        assertThatThrownBy(() -> RescanInterval.parse(raw))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("negative duration \"" + raw.strip() + "\" is not a rescan interval");
    }

    @ParameterizedTest(name = "\"{0}\" -> {1}")
    @CsvSource(delimiter = '|', value = {
            "not-a-duration | time: invalid duration \"not-a-duration\"",
            "30             | time: missing unit in duration \"30\"",
            "'30 s'         | time: unknown unit \" s\" in duration \"30 s\"",
            "1d             | time: unknown unit \"d\" in duration \"1d\"",
            "'  5m0  '      | time: missing unit in duration \"5m0\"",
            "1e3s           | time: unknown unit \"e\" in duration \"1e3s\"",
            "+              | time: invalid duration \"+\"",
            "'-'            | time: invalid duration \"-\"",
            "5\u0000s       | time: unknown unit \"\\x00s\" in duration \"5\\x00s\"",
            "9223372036854775808ns | time: invalid duration \"9223372036854775808ns\"",
    })
    void malformedValuesAreErrorsQuotingTheInput(String raw, String message) {
        assertThatThrownBy(() -> RescanInterval.parse(raw))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message)
                .hasMessageContaining(GoText.quote(GoText.trimSpace(raw)));
    }

    @Test
    void aNegativePeriodCannotBeBuilt() {
        assertThatThrownBy(() -> new RescanInterval(Duration.ofSeconds(-1), Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
