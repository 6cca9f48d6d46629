package dev.vgpu.core.internal;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The project's one JSON writer, for its few small documents (the daemon's {@code discover --format json}, the DRA
 * plugin's CDI specs and device metadata): maps (string keys, in their iteration order), lists, strings, integers
 * and booleans. Strings escape quotes, backslashes, control characters, DEL and the Unicode line and paragraph
 * separators; everything else is written as it is (to be encoded as UTF-8). A JSON library would be a dependency of
 * every user of the library for about fifty lines. Stateless.
 * <pre>{@code
 * JsonText.write(Map.of("cdiVersion", "0.5.0"))   // {"cdiVersion":"0.5.0"}
 * }</pre>
 */
public final class JsonText {

    private JsonText() {
    }

    /**
     * The value as compact JSON.
     *
     * @throws IllegalArgumentException for a value that has no JSON form here (null, another type, a non-string key)
     */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder(1024);
        write(out, value);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value) {
        if (value instanceof Map<?, ?> map) {
            out.append('{');
            String comma = "";
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!(entry.getKey() instanceof String key)) {
                    throw new IllegalArgumentException("a JSON object key must be a string, got " + entry.getKey());
                }
                out.append(comma);
                quote(out, key);
                out.append(':');
                write(out, entry.getValue());
                comma = ",";
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            String comma = "";
            for (Object element : list) {
                out.append(comma);
                write(out, element);
                comma = ",";
            }
            out.append(']');
        } else if (value instanceof String text) {
            quote(out, text);
        } else if (value instanceof Integer || value instanceof Long || value instanceof Boolean) {
            out.append(value);
        } else {
            throw new IllegalArgumentException("no JSON form for " + (value == null ? "null" : value.getClass()));
        }
    }

    private static void quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
