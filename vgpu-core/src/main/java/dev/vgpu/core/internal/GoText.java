package dev.vgpu.core.internal;

import java.nio.charset.StandardCharsets;

/** Go's text helpers whose exact output is part of our contracts: the time package's quoting and TrimSpace. */
public final class GoText {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private GoText() {
    }

    /**
     * Quotes text as Go's {@code time} package does in its errors: in double quotes, {@code "} and {@code \}
     * escaped with a backslash, every control character and every non-ASCII character written as the
     * {@code \xNN} escapes of its UTF-8 bytes (an unpaired surrogate counts as U+FFFD).
     */
    public static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (c < ' ' || c >= 0x80) {
                if (Character.isSurrogate((char) c) && Character.charCount(c) == 1) {
                    c = 0xFFFD;
                }
                for (byte b : new String(Character.toChars(c)).getBytes(StandardCharsets.UTF_8)) {
                    out.append("\\x").append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
                }
            } else {
                if (c == '"' || c == '\\') {
                    out.append('\\');
                }
                out.append((char) c);
            }
        }
        return out.append('"').toString();
    }

    /** Go's {@code strings.TrimSpace}: removes leading and trailing characters for which {@link #isSpace} holds. */
    public static String trimSpace(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.charAt(start))) {
            start++;
        }
        while (end > start && isSpace(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(start, end);
    }

    /**
     * Go's {@code unicode.IsSpace}: tab, newline, vertical tab, form feed, carriage return, space, U+0085,
     * U+00A0 and the other characters of Unicode's White_Space property (all in the BMP).
     */
    public static boolean isSpace(char c) {
        switch (c) {
            case '\t':
            case '\n':
            case '\u000b':
            case '\f':
            case '\r':
            case ' ':
            case '\u0085':
            case '\u00a0':
            case '\u1680':
            case '\u2028':
            case '\u2029':
            case '\u202f':
            case '\u205f':
            case '\u3000':
                return true;
            default:
                return c >= '\u2000' && c <= '\u200a';
        }
    }
}
