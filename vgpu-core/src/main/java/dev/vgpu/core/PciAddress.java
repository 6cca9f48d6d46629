package dev.vgpu.core;

import dev.vgpu.core.internal.Printable;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PCI function address in the sysfs form {@code dddd:bb:ss.f}, for example {@code 0000:41:00.4}.
 *
 * <p>Parsing accepts upper- or lowercase hex and normalizes to lowercase. The domain has four hex digits
 * on ordinary hosts; longer domains (up to eight digits, as Intel VMD creates) are accepted too. The
 * slot is at most {@code 0x1f} and the function at most {@code 7}.
 *
 * @param domain   PCI segment
 * @param bus      bus number, 0..255
 * @param slot     device (slot) number, 0..31
 * @param function function number, 0..7
 */
public record PciAddress(int domain, int bus, int slot, int function) implements Comparable<PciAddress> {

    private static final Pattern SYSFS_FORM =
            Pattern.compile("([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");
    private static final Comparator<PciAddress> ORDER = Comparator.comparingLong(PciAddress::domainUnsigned)
            .thenComparingInt(PciAddress::bus)
            .thenComparingInt(PciAddress::slot)
            .thenComparingInt(PciAddress::function);

    /** Validates the ranges of every part. */
    public PciAddress {
        if (bus < 0 || bus > 0xff) {
            throw new IllegalArgumentException("PCI bus out of range 0..ff: " + bus);
        }
        if (slot < 0 || slot > 0x1f) {
            throw new IllegalArgumentException("PCI slot out of range 0..1f: " + slot);
        }
        if (function < 0 || function > 7) {
            throw new IllegalArgumentException("PCI function out of range 0..7: " + function);
        }
    }

    /**
     * Parses the sysfs form {@code dddd:bb:ss.f}.
     *
     * @throws IllegalArgumentException naming the input when it is not a valid address
     */
    public static PciAddress parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("not a PCI address: null");
        }
        Matcher m = SYSFS_FORM.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PCI address in the form dddd:bb:ss.f: \"" + Printable.of(text) + "\"");
        }
        int slot = Integer.parseInt(m.group(3), 16);
        if (slot > 0x1f) {
            throw new IllegalArgumentException("not a PCI address, slot above 1f: \"" + Printable.of(text) + "\"");
        }
        return new PciAddress((int) Long.parseLong(m.group(1), 16), Integer.parseInt(m.group(2), 16), slot,
                Integer.parseInt(m.group(4)));
    }

    /** True when {@link #parse} would accept the text. */
    public static boolean isValid(String text) {
        try {
            parse(text);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private long domainUnsigned() {
        return Integer.toUnsignedLong(domain);
    }

    /** The sysfs form, lowercase, at least four domain digits. */
    @Override
    public String toString() {
        // By hand rather than String.format: devices and skip reasons name their PF on every scan.
        int domainDigits = Math.max(4, (32 - Integer.numberOfLeadingZeros(domain) + 3) / 4);
        byte[] text = new byte[domainDigits + 8];
        hex(text, 0, domainDigits, domainUnsigned());
        text[domainDigits] = ':';
        hex(text, domainDigits + 1, 2, bus);
        text[domainDigits + 3] = ':';
        hex(text, domainDigits + 4, 2, slot);
        text[domainDigits + 6] = '.';
        hex(text, domainDigits + 7, 1, function);
        return new String(text, StandardCharsets.ISO_8859_1);
    }

    /** Writes {@code digits} lowercase hex digits of {@code value}, zero-padded, at {@code offset}. */
    private static void hex(byte[] text, int offset, int digits, long value) {
        for (int i = offset + digits - 1; i >= offset; i--) {
            text[i] = (byte) Character.forDigit((int) (value & 0xf), 16);
            value >>>= 4;
        }
    }

    @Override
    public int compareTo(PciAddress other) {
        return ORDER.compare(this, other);
    }
}
