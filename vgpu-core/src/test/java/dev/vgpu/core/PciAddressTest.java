package dev.vgpu.core;

import dev.vgpu.core.internal.Printable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class PciAddressTest {

    @ParameterizedTest(name = "{0} -> {5}")
    @CsvSource(delimiter = '|', value = {
            // input        | domain | bus | slot | fn | normalized
            "0000:41:00.4   | 0      | 65  | 0    | 4  | 0000:41:00.4",
            "0000:00:00.0   | 0      | 0   | 0    | 0  | 0000:00:00.0",
            "0000:ff:1f.7   | 0      | 255 | 31   | 7  | 0000:ff:1f.7",
            "0000:1B:00.4   | 0      | 27  | 0    | 4  | 0000:1b:00.4",
            "ABCD:EF:1A.3   | 43981  | 239 | 26   | 3  | abcd:ef:1a.3",
            "0009:01:00.0   | 9      | 1   | 0    | 0  | 0009:01:00.0",
            "10000:00:02.0  | 65536  | 0   | 2    | 0  | 10000:00:02.0",
            "0000a:00:02.0  | 10     | 0   | 2    | 0  | 000a:00:02.0",
            "ffffffff:00:00.0 | -1   | 0   | 0    | 0  | ffffffff:00:00.0",
    })
    void parsesAndNormalizes(String input, int domain, int bus, int slot, int function, String normalized) {
        PciAddress address = PciAddress.parse(input);

        assertThat(address).isEqualTo(new PciAddress(domain, bus, slot, function));
        assertThat(address.toString()).isEqualTo(normalized);
        assertThat(PciAddress.parse(address.toString())).isEqualTo(address);
        assertThat(PciAddress.isValid(input)).isTrue();
    }

    @ParameterizedTest(name = "rejects \"{0}\"")
    @NullAndEmptySource
    @ValueSource(strings = {
            "41:00.4",              // no domain (lspci short form)
            "000:41:00.4",          // three-digit domain
            "123456789:41:00.4",    // nine-digit domain
            "0000:041:00.4",        // three-digit bus
            "0000:4:00.4",          // one-digit bus
            "0000:41:0.4",          // one-digit slot
            "0000:41:20.0",         // slot above 1f
            "0000:41:ff.0",         // slot far above 1f
            "0000:41:00.8",         // function above 7
            "0000:41:00.a",         // hex function
            "0000:41:00",           // no function
            "0000:41:00.",          // empty function
            "0000-41-00.4",         // wrong separators
            "0000:41.00.4",
            "0000:41:00:4",
            " 0000:41:00.4",        // surrounding whitespace
            "0000:41:00.4\n",       // trailing newline as sysfs files end
            "0000:41:00.4 ",
            "0000:4g:00.4",         // not hex
            "０000:41:00.4",         // fullwidth digit
            "0000:41:00.4/../..",   // path injection
            "../0000:41:00.4",
            "0000:41:00.4\u0000",   // NUL
            "00000000:00:00.0:0",
            "0x00:41:00.4",
            "+000:41:00.4",
    })
    void rejectsMalformedInputWithAClearMessage(String input) {
        assertThat(PciAddress.isValid(input)).isFalse();
        assertThatThrownBy(() -> PciAddress.parse(input))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(input == null ? "not a PCI address: null" : "\"" + Printable.of(input) + "\"")
                .satisfies(e -> assertThat(e.getMessage()).startsWith("not a PCI address").doesNotContain("\n", "\u0000"));
    }

    @Test
    void theMessageQuotesTheInput() {
        assertThatThrownBy(() -> PciAddress.parse("0000:41:00.9"))
                .hasMessage("not a PCI address in the form dddd:bb:ss.f: \"0000:41:00.9\"");
        assertThatThrownBy(() -> PciAddress.parse("0000:41:3f.0"))
                .hasMessage("not a PCI address, slot above 1f: \"0000:41:3f.0\"");
    }

    @Test
    void aVeryLongInputIsCutInTheMessage() {
        String longInput = "0".repeat(10_000);

        assertThatThrownBy(() -> PciAddress.parse(longInput))
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).endsWith("…\""));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "bus, 0, 256, 0, 0",
            "bus, 0, -1, 0, 0",
            "slot, 0, 0, 32, 0",
            "slot, 0, 0, -1, 0",
            "function, 0, 0, 0, 8",
            "function, 0, 0, 0, -1",
    })
    void theConstructorChecksRanges(String part, int domain, int bus, int slot, int function) {
        assertThatThrownBy(() -> new PciAddress(domain, bus, slot, function))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PCI " + part + " out of range");
    }

    @Test
    void ordersByDomainBusSlotFunctionWithTheDomainUnsigned() {
        List<String> sorted = List.of("0000:00:00.0", "0000:00:00.1", "0000:00:01.0", "0000:00:1f.7",
                "0000:01:00.0", "0000:1b:00.4", "0000:ff:00.0", "0001:00:00.0", "ffff:00:00.0",
                "10000:00:00.0", "7fffffff:00:00.0", "80000000:00:00.0", "ffffffff:00:00.0");
        List<PciAddress> shuffled = new ArrayList<>(sorted.stream().map(PciAddress::parse).toList());
        Collections.shuffle(shuffled, new java.util.Random(42));

        Collections.sort(shuffled);

        assertThat(shuffled).extracting(PciAddress::toString).containsExactlyElementsOf(sorted);
    }

    @Test
    void upperAndLowerCaseSpellingsAreOneAddress() {
        PciAddress lower = PciAddress.parse("0000:1b:0a.4");
        PciAddress upper = PciAddress.parse("0000:1B:0A.4");

        assertThat(upper).isEqualTo(lower).hasSameHashCodeAs(lower);
        assertThat(upper.compareTo(lower)).isZero();
    }
}
