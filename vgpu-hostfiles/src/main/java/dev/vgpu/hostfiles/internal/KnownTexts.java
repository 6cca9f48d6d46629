package dev.vgpu.hostfiles.internal;

import java.nio.charset.StandardCharsets;

/**
 * The strings of short ASCII texts that the host hands out on every scan (bus entry names such as
 * {@code 0000:41:00.0}, attribute values such as {@code 0x10de}, driver and group names), kept so that a rescan
 * reading the same bytes gets the string the last one made instead of a new one: on a large host these were a fifth
 * of the bytes a rescan allocated (BENCHMARKS.md, "Known texts and errno only where a call failed before").
 *
 * <p>Each table is a fixed array of slots, each holding a string or null; a text goes to one of {@value #PROBES}
 * slots after its hash, and when those are taken by other texts it replaces the first. So the main table holds at
 * most {@value #SLOTS} strings of at most {@value #MAX_LENGTH} characters and the small one {@value #LONG_SLOTS} of
 * at most {@value #MAX_LONG_LENGTH} (about 1.7 MB in all in the worst case, a few hundred kilobytes for the large
 * host's 5,040 functions), whatever the host: a host whose texts do not fit only makes new strings, as before.
 *
 * <p>One table per {@link dev.vgpu.hostfiles.HostFiles} (it lives as long as that reader, so a rescan finds the strings
 * the last scan made); nothing is kept process-wide.
 *
 * <p>Threads: one table for every thread of its reader, without locks. A string's fields are final, so a thread that reads a slot
 * another thread has just written sees either a whole string, an earlier one or null; it compares the characters
 * before it hands a string out. A race can cost a new string, never a wrong one.
 */
public final class KnownTexts {

    /** The longest text of the main table: bus entry names, ids, driver and group names, profile names. */
    public static final int MAX_LENGTH = 48;
    /**
     * The longest text of the small table: a VF's {@code creatable_vgpu_types} list, the same on every VF of a card
     * and read from each of them on every scan. Longer texts are left to the caller.
     */
    public static final int MAX_LONG_LENGTH = 4096;
    private static final int SLOTS = 1 << 14;
    private static final int LONG_SLOTS = 64;
    private static final int PROBES = 4;
    private final String[] table = new String[SLOTS];
    private final String[] longTable = new String[LONG_SLOTS];

    /** An empty table. */
    public KnownTexts() {
    }

    /**
     * The text of {@code bytes[from, to)}, decoded as ASCII: the string an earlier call made of the same bytes where
     * a table still holds it, else a new one it keeps. Null when it is longer than {@value #MAX_LONG_LENGTH} bytes
     * or a byte is not ASCII: the caller makes that string its own way.
     */
    public String of(byte[] bytes, int from, int to) {
        int length = to - from;
        if (length > MAX_LONG_LENGTH) {
            return null;
        }
        int hash = 0;
        for (int i = from; i < to; i++) {
            byte b = bytes[i];
            if (b < 0) {
                return null;
            }
            hash = 31 * hash + b;
        }
        hash ^= hash >>> 16;
        hash *= 0x45d9f3b;
        hash ^= hash >>> 16;
        return length <= MAX_LENGTH ? in(table, hash, bytes, from, length) : in(longTable, hash, bytes, from, length);
    }

    private static String in(String[] table, int hash, byte[] bytes, int from, int length) {
        int mask = table.length - 1;
        int home = hash & mask;
        for (int p = 0; p < PROBES; p++) {
            int slot = (home + p) & mask;
            String known = table[slot];
            if (known == null) {
                return table[slot] = new String(bytes, from, length, StandardCharsets.US_ASCII);
            }
            if (same(known, bytes, from, length)) {
                return known;
            }
        }
        return table[home] = new String(bytes, from, length, StandardCharsets.US_ASCII);
    }

    private static boolean same(String known, byte[] bytes, int from, int length) {
        if (known.length() != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (known.charAt(i) != bytes[from + i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The text of {@code buffer[0, length)} as UTF-8 (malformed bytes become U+FFFD); with {@code strip}, equal to
     * {@code text.strip()}: ASCII whitespace (what {@link Character#isWhitespace} says of a byte below 0x80, a whole
     * character in UTF-8) is cut from the bytes, and {@link String#strip()} then removes any other whitespace,
     * returning the same string when there is none. A short ASCII text is the string this table keeps for its bytes.
     */
    public String decode(byte[] buffer, int length, boolean strip) {
        int from = 0;
        int to = length;
        if (strip) {
            while (from < to && isAsciiWhitespace(buffer[from])) {
                from++;
            }
            while (to > from && isAsciiWhitespace(buffer[to - 1])) {
                to--;
            }
        }
        String known = of(buffer, from, to);
        if (known != null) {
            return known; // ASCII only, so the cut above was all the stripping there is
        }
        String text = new String(buffer, from, to - from, StandardCharsets.UTF_8);
        return strip ? text.strip() : text;
    }

    private static boolean isAsciiWhitespace(byte b) {
        return b == ' ' || (b >= 0x09 && b <= 0x0d) || (b >= 0x1c && b <= 0x1f);
    }
}
