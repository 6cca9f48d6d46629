package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Every {@link ResourceName} that any factory builds, from any text, is a valid extended-resource name that is
 * safe as a socket file name (docs/HOST-FACTS.md traps 13 and 14).
 */
class ResourceNamePropertyTest {

    static final Pattern VALID = Pattern.compile("^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$");

    @Property(tries = 1000)
    void everyBuiltNameIsValid(@ForAll("hostileText") String raw, @ForAll("deviceIds") String deviceId) {
        for (Optional<ResourceName> built : List.of(ResourceName.sanitize(raw), ResourceName.forMdevType(raw),
                ResourceName.forVgpuProfile(raw), ResourceName.forPciDeviceName(raw, deviceId),
                ResourceName.forPciDeviceName(null, deviceId))) {
            built.ifPresent(name -> {
                assertThat(name.name()).matches(VALID).doesNotContain("..");
                assertThat(name.socketFileName()).doesNotContain("/", "..", "\u0000");
                assertThat(ResourceName.sanitize(name.name())).contains(name);
            });
        }
    }

    @Property(tries = 500)
    void aNameIsBuiltExactlyWhenTheTextHasAnAsciiLetterOrDigit(@ForAll("hostileText") String raw) {
        boolean hasAlphanumeric = raw.chars().anyMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9'));

        assertThat(ResourceName.sanitize(raw).isPresent()).isEqualTo(hasAlphanumeric);
        assertThat(ResourceName.forMdevType(raw).isPresent()).isEqualTo(hasAlphanumeric);
    }

    @Property(tries = 300)
    void aPassthroughNameNeverHasLowercaseLettersUnlessItIsTheDeviceId(@ForAll("hostileText") String raw) {
        ResourceName.forPciDeviceName(raw, "abcd").ifPresent(name -> {
            if (!name.name().equals("abcd")) {
                assertThat(name.name()).matches("[A-Z0-9_]+");
            }
        });
    }

    @Property(tries = 500)
    void aSocketNameFitsItsBudgetAndIsTheFullOneWhenThatFits(@ForAll("hostileText") String raw,
                                                              @ForAll @IntRange(min = -5, max = 100) int budget) {
        ResourceName.sanitize(raw).ifPresent(name -> {
            String full = name.socketFileName();
            java.util.Optional<String> file = name.socketFileName(budget);
            if (full.length() <= budget) {
                assertThat(file).contains(full);
            } else if (budget < ResourceName.SHORTEST_SOCKET_FILE_NAME_BYTES) {
                assertThat(file).isEmpty();
            } else {
                assertThat(file.orElseThrow()).hasSizeLessThanOrEqualTo(budget)
                        .matches("kubevirt-([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?-)?[0-9a-f]{8}\\.sock")
                        .doesNotContain("/", "..", "\u0000");
                String middle = file.orElseThrow().substring("kubevirt-".length(),
                        file.orElseThrow().length() - ".sock".length());
                assertThat(name.name()).startsWith(middle.length() > 8 ? middle.substring(0, middle.length() - 9) : "");
            }
        });
    }

    @Provide
    Arbitrary<String> hostileText() {
        return Arbitraries.oneOf(
                // any BMP character, surrogates and noncharacters included
                Arbitraries.strings().all().ofMaxLength(200),
                // the characters that matter to names and paths, densely
                Arbitraries.strings().withChars("./\\ \t\n\r\f\u000b\u0000-_.aZ9éß\u00a0\u3000[]()+:,;\"'")
                        .ofMaxLength(200),
                // long names made of valid characters
                Arbitraries.strings().withChars("aZ9_.-").ofMinLength(50).ofMaxLength(200),
                Arbitraries.of("", " ", "..", "../..", "GRID T4-1Q", "NVIDIA RTX Pro 6000 Blackwell DC-1-2Q",
                        "GH100 [H200 SXM 141GB]"));
    }

    @Provide
    Arbitrary<String> deviceIds() {
        return Arbitraries.oneOf(
                Arbitraries.strings().withChars("0123456789abcdefABCDEF").ofLength(4),
                Arbitraries.strings().withChars("0123456789abcdefg/.\u0000 ").ofMaxLength(6));
    }
}
