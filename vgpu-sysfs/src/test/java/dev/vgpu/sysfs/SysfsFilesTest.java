package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SysfsFilesTest {

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"0000:41:00.0", "0000:1b:1f.7", "0000:1B:00.4", "10000:00:00.0", "ffffffff:ff:1f.7",
        "0000:41:20.0", "0000:41:00.8", "000:41:00.0", "000000000:41:00.0", "0000-41:00.0", "0000:41:00:0",
        "0000:4g:00.0", "0000:41:0.0", "", "x", "0000:41:00.", "gpu0", "0000:41:00.0 ", "aa618089-8b16-4d01",
        "\uff10000:41:00.0", "0000:4\u0661:00.0", "0000:41:\uff11f.0"})
    void pciAddressCheckAgreesWithThePciAddressParser(String text) {
        assertThat(SysfsFiles.isPciAddress(text)).isEqualTo(PciAddress.isValid(text));
    }

    @Test
    void pciAddressCheckAgreesOnRandomTexts() {
        Random random = new Random(42);
        String alphabet = "0123456789abcdefABCDEFxg:.-";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder text = new StringBuilder(random.nextBoolean() ? "0000:" : "");
            int length = 3 + random.nextInt(12);
            for (int j = 0; j < length; j++) {
                text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String candidate = random.nextInt(4) == 0 ? String.format("%04x:%02x:%02x.%d", random.nextInt(0x10000),
                    random.nextInt(256), random.nextInt(64), random.nextInt(10)) : text.toString();
            assertThat(SysfsFiles.isPciAddress(candidate)).as(candidate).isEqualTo(PciAddress.isValid(candidate));
        }
    }

    @Test
    void printableReplacesControlsAndCuts() {
        assertThat(SysfsFiles.printable("a\u0000b\nc")).isEqualTo("a\\u0000b\\nc");
        assertThat(SysfsFiles.printable("x".repeat(100))).hasSize(81).endsWith("…");
    }

    @Test
    void tokensAreWhatDeviceAccepts() {
        assertThat(SysfsFiles.isToken("vfio3")).isTrue();
        assertThat(SysfsFiles.isToken("")).isFalse();
        assertThat(SysfsFiles.isToken("a b")).isFalse();
        assertThat(SysfsFiles.isToken("a,b")).isFalse();
        assertThat(SysfsFiles.isToken("a/b")).isFalse();
        assertThat(SysfsFiles.isToken("x".repeat(64))).isFalse();
    }
}
