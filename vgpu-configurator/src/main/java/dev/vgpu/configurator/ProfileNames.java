package dev.vgpu.configurator;

import dev.vgpu.core.internal.Printable;
import java.util.OptionalInt;

/**
 * How profile names are compared and read. A layout may name a profile in full ({@code NVIDIA L40S-4Q}, as the
 * driver prints it) or without the vendor word ({@code L40S-4Q}, as NVIDIA's vgpu-device-manager files do); runs of
 * whitespace count as one space. The framebuffer size is the number before the series letters of the name's last
 * dash-separated part: {@code NVIDIA L40S-4Q} 4 GB, {@code NVIDIA H200X-1-18C} 18 GB (docs/CONFIGURATOR.md).
 * Stateless.
 */
final class ProfileNames {

    /** What the driver's profile names start with and short names leave out. */
    static final String VENDOR_WORD = "NVIDIA ";
    /** The longest framebuffer number read (in GB); anything longer is no size. */
    private static final int MAX_SIZE_DIGITS = 6;

    private ProfileNames() {
    }

    /** True when the driver's {@code typeName} is the profile a layout calls {@code wanted}. */
    static boolean matches(String typeName, String wanted) {
        String type = collapse(typeName);
        String asked = collapse(wanted);
        return type.equals(asked) || type.equals(VENDOR_WORD + asked);
    }

    /** The framebuffer size in GB the name states; empty when its last part is not digits then letters. */
    static OptionalInt framebufferGb(String name) {
        String text = collapse(name);
        String last = text.substring(text.lastIndexOf('-') + 1);
        int digits = 0;
        while (digits < last.length() && last.charAt(digits) >= '0' && last.charAt(digits) <= '9') {
            digits++;
        }
        if (digits == 0 || digits > MAX_SIZE_DIGITS || digits == last.length()) {
            return OptionalInt.empty();
        }
        for (int i = digits; i < last.length(); i++) {
            char c = last.charAt(i);
            if (!(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z')) {
                return OptionalInt.empty();
            }
        }
        int size = Integer.parseInt(last.substring(0, digits));
        return size > 0 ? OptionalInt.of(size) : OptionalInt.empty();
    }

    /** Stripped, every whitespace run one space. */
    static String collapse(String name) {
        return name.strip().replaceAll("\\s+", " ");
    }

    /** Host or user text for a message: quoted, escaped, cut (profile names come from files and files from users). */
    static String quoted(String text) {
        return "\"" + Printable.of(text, 120) + "\"";
    }
}
