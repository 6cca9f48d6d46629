package dev.vgpu.core.spi;

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
 * <p>Threads: one table for every thread, without locks. A string's fields are final, so a thread that reads a slot
 * another thread has just written sees either a whole string, an earlier one or null; it compares the characters
 * before it hands a string out. A race can cost a new string, never a wrong one.
 */
final class KnownTexts {

    /** The longest text of the main table: bus entry names, ids, driver and group names, profile names. */
    static final int MAX_LENGTH = 48;
    /**
     * The longest text of the small table: a VF's {@code creatable_vgpu_types} list, the same on every VF of a card
     * and read from each of them on every scan. Longer texts are left to the caller.
     */
    static final int MAX_LONG_LENGTH = 4096;
    private static final int SLOTS = 1 << 14;
    private static final int LONG_SLOTS = 64;
    private static final int PROBES = 4;
    private static final String[] TABLE = new String[SLOTS];
    private static final String[] LONG_TABLE = new String[LONG_SLOTS];

    private KnownTexts() {
    }

    /**
     * The text of {@code bytes[from, to)}, decoded as ASCII: the string an earlier call made of the same bytes where
     * a table still holds it, else a new one it keeps. Null when it is longer than {@value #MAX_LONG_LENGTH} bytes
     * or a byte is not ASCII: the caller makes that string its own way.
     */
    static String of(byte[] bytes, int from, int to) {
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
        return length <= MAX_LENGTH ? in(TABLE, hash, bytes, from, length) : in(LONG_TABLE, hash, bytes, from, length);
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
}
