package dev.vgpu.core.internal;

/**
 * Text from outside (a client's device id, a file's content, a link's text) made safe for one log line or one
 * gRPC status description: nothing in it can start a new line, move the cursor or grow the line without bound.
 *
 * <p>Control characters (C0, DEL, C1), the Unicode line and paragraph separators, format characters (category Cf:
 * the bidirectional overrides and isolates such as U+202E and U+2066 that make a terminal show a line in another
 * order than it was written, zero-width characters, the byte-order mark) and unpaired surrogates are written as
 * escapes ({@code \n}, {@code \r}, {@code \t}, otherwise {@code \}{@code uXXXX}, or {@code \}{@code UXXXXXXXX}
 * for a format character beyond the BMP), a backslash as
 * {@code \\}, so an escaped text is never mistaken for what it stands for. The result holds at most
 * {@value #DEFAULT_LIMIT} characters of the input (or the limit given), then {@code …}; a surrogate pair is never
 * cut. Everything that puts an outside string in a message uses this one helper.
 * <pre>{@code
 * LOG.warn("Refused allocation of {}", Printable.of(clientId));   // "0000:41:00.0\nforged" -> 0000:41:00.0\nforged
 * }</pre>
 */
public final class Printable {

    /** How many characters of the input {@link #of(String)} keeps. */
    public static final int DEFAULT_LIMIT = 80;

    private Printable() {
    }

    /** The text escaped and cut after {@value #DEFAULT_LIMIT} characters; {@code null} gives the word {@code null}. */
    public static String of(String text) {
        return of(text, DEFAULT_LIMIT);
    }

    /**
     * True when nothing in {@code text} would be escaped: {@code of(text, text.length())} equals it. Asks without
     * making the escaped copy (a profile name is checked once per device and scan).
     */
    public static boolean isPlain(String text) {
        int length = text.length();
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1))) {
                if (escapedCodePoint(Character.toCodePoint(c, text.charAt(++i)))) {
                    return false;
                }
            } else if (c == '\\' || escapedChar(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The text escaped and cut after {@code limit} characters of input.
     *
     * @throws IllegalArgumentException when {@code limit} is negative
     */
    public static String of(String text, int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit " + limit + " is negative");
        }
        if (text == null) {
            return "null";
        }
        int end = Math.min(text.length(), limit);
        if (end < text.length() && end > 0 && Character.isHighSurrogate(text.charAt(end - 1))
                && Character.isLowSurrogate(text.charAt(end))) {
            end--;
        }
        StringBuilder out = new StringBuilder(end + 8);
        for (int i = 0; i < end; i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))
                    && i + 1 < end) {
                int codePoint = Character.toCodePoint(c, text.charAt(++i));
                if (escapedCodePoint(codePoint)) {
                    out.append(String.format("\\U%08x", codePoint));
                } else {
                    out.appendCodePoint(codePoint);
                }
            } else if (c == '\\') {
                out.append("\\\\");
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (escapedChar(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return end < text.length() ? out.append('…').toString() : out.toString();
    }

    /** A character {@link #of} escapes (besides the backslash): controls, line separators, lone surrogates, formats. */
    private static boolean escapedChar(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029' || Character.isSurrogate(c)
                || Character.getType(c) == Character.FORMAT;
    }

    /** A code point beyond the BMP that {@link #of} escapes: a format character (a language tag). */
    private static boolean escapedCodePoint(int codePoint) {
        return Character.getType(codePoint) == Character.FORMAT;
    }
}
