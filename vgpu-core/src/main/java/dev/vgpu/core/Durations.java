package dev.vgpu.core;

import java.time.Duration;

/**
 * Go's {@code time.ParseDuration} grammar, exactly, and the rescan-interval policy built on it.
 *
 * <p>Grammar: an optional {@code +} or {@code -}, then one or more {@code <number><unit>} pairs with no
 * spaces; a number is digits with an optional fraction ({@code 1.}, {@code .5}, {@code 1.5}); units are
 * {@code ns}, {@code us}, {@code µs} (U+00B5), {@code μs} (U+03BC), {@code ms}, {@code s}, {@code m},
 * {@code h}. The bare string {@code 0} (with an optional sign) is zero. The value must fit in a signed 64-bit
 * count of nanoseconds; fractions are truncated to whole nanoseconds.
 */
public final class Durations {

    /** The shortest rescan interval; positive values below it are raised to it. */
    public static final Duration MIN_RESCAN_INTERVAL = Duration.ofSeconds(5);

    private static final long NANOS_PER_MICRO = 1_000L;
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private Durations() {
    }

    /**
     * Parses a Go duration such as {@code 1h2m3.5s}.
     *
     * @throws IllegalArgumentException with Go's message, quoting the input, when it is not a valid duration
     */
    public static Duration parseGo(String text) {
        return Duration.ofNanos(parseGoNanos(text));
    }

    /**
     * Parses a Go duration to nanoseconds.
     *
     * @throws IllegalArgumentException with Go's message, quoting the input, when it is not a valid duration
     */
    public static long parseGoNanos(String text) {
        if (text == null) {
            throw new IllegalArgumentException("time: invalid duration \"null\"");
        }
        String s = text;
        int i = 0;
        boolean negative = false;
        if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
            negative = s.charAt(0) == '-';
            i = 1;
        }
        if (s.substring(i).equals("0")) {
            return 0;
        }
        if (i == s.length()) {
            throw invalid(text);
        }
        // Accumulate the magnitude as an unsigned 64-bit value so that the int64 minimum stays reachable.
        long total = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != '.' && !isDigit(c)) {
                throw invalid(text);
            }
            int start = i;
            long whole = 0;
            boolean overflow = false;
            while (i < s.length() && isDigit(s.charAt(i))) {
                int digit = s.charAt(i) - '0';
                if (Long.compareUnsigned(whole, (Long.MAX_VALUE - digit) / 10) > 0) {
                    overflow = true;
                }
                whole = whole * 10 + digit;
                i++;
            }
            if (overflow) {
                throw invalid(text);
            }
            boolean hadWhole = i > start;
            long fraction = 0;
            double scale = 1;
            boolean hadFraction = false;
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                int fracStart = i;
                boolean saturated = false;
                while (i < s.length() && isDigit(s.charAt(i))) {
                    if (!saturated) {
                        if (fraction > (Long.MAX_VALUE - 9) / 10) {
                            saturated = true;
                        } else {
                            fraction = fraction * 10 + (s.charAt(i) - '0');
                            scale *= 10;
                        }
                    }
                    i++;
                }
                hadFraction = i > fracStart;
            }
            if (!hadWhole && !hadFraction) {
                throw invalid(text);
            }
            int unitStart = i;
            while (i < s.length() && s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
                i++;
            }
            if (unitStart == i) {
                throw new IllegalArgumentException("time: missing unit in duration " + quote(text));
            }
            String unitText = s.substring(unitStart, i);
            long unit = unitNanos(unitText);
            if (unit < 0) {
                throw new IllegalArgumentException("time: unknown unit " + quote(unitText) + " in duration "
                        + quote(text));
            }
            if (Long.compareUnsigned(whole, Long.MAX_VALUE / unit) > 0) {
                throw invalid(text);
            }
            long value = whole * unit;
            if (fraction > 0) {
                value += (long) ((double) fraction * ((double) unit / scale));
                if (value < 0) {
                    throw invalid(text);
                }
            }
            total += value;
            if (Long.compareUnsigned(total, Long.MAX_VALUE) > 0) {
                throw invalid(text);
            }
        }
        if (negative) {
            return -total;
        }
        if (Long.compareUnsigned(total, Long.MAX_VALUE) > 0) {
            throw invalid(text);
        }
        return total;
    }

    /**
     * Applies the rescan policy to a configured value: unset, blank or zero disables rescans; a positive value
     * below {@link #MIN_RESCAN_INTERVAL} is raised to it.
     *
     * @param raw the value as configured (surrounding whitespace is ignored), may be null
     * @throws IllegalArgumentException quoting the input when it is malformed or negative
     */
    public static RescanInterval rescanInterval(String raw) {
        if (raw == null || raw.isBlank()) {
            return RescanInterval.DISABLED;
        }
        String text = raw.strip();
        Duration parsed = parseGo(text);
        if (parsed.isNegative()) {
            throw new IllegalArgumentException("negative duration " + quote(text) + " is not a rescan interval");
        }
        if (parsed.isZero()) {
            return RescanInterval.DISABLED;
        }
        if (parsed.compareTo(MIN_RESCAN_INTERVAL) < 0) {
            return new RescanInterval(MIN_RESCAN_INTERVAL, java.util.Optional.of(parsed));
        }
        return new RescanInterval(parsed, java.util.Optional.empty());
    }

    /**
     * Prints a duration the way Go's {@code Duration.String} does for the common cases, e.g. {@code 1m30s},
     * {@code 5s}, {@code 1.5s}, {@code 0s}; used in log lines so they echo the configured syntax.
     */
    public static String formatGo(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        StringBuilder out = new StringBuilder();
        if (d.isNegative()) {
            out.append('-');
            d = d.negated();
        }
        long hours = d.toHours();
        long minutes = d.toMinutesPart();
        long nanos = d.minusHours(hours).minusMinutes(minutes).toNanos();
        if (hours > 0) {
            out.append(hours).append('h');
        }
        if (hours > 0 || minutes > 0) {
            out.append(minutes).append('m');
        }
        if (hours == 0 && minutes == 0 && nanos < NANOS_PER_SECOND) {
            if (nanos % NANOS_PER_MILLI == 0) {
                return out.append(nanos / NANOS_PER_MILLI).append("ms").toString();
            }
            if (nanos % NANOS_PER_MICRO == 0) {
                return out.append(nanos / NANOS_PER_MICRO).append("µs").toString();
            }
            return out.append(nanos).append("ns").toString();
        }
        out.append(nanos / NANOS_PER_SECOND);
        long frac = nanos % NANOS_PER_SECOND;
        if (frac != 0) {
            String digits = String.format(java.util.Locale.ROOT, "%09d", frac).replaceAll("0+$", "");
            out.append('.').append(digits);
        }
        return out.append('s').toString();
    }

    private static long unitNanos(String unit) {
        switch (unit) {
            case "ns":
                return 1;
            case "us":
            case "\u00b5s":
            case "\u03bcs":
                return NANOS_PER_MICRO;
            case "ms":
                return NANOS_PER_MILLI;
            case "s":
                return NANOS_PER_SECOND;
            case "m":
                return 60 * NANOS_PER_SECOND;
            case "h":
                return 3600 * NANOS_PER_SECOND;
            default:
                return -1;
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static IllegalArgumentException invalid(String text) {
        return new IllegalArgumentException("time: invalid duration " + quote(text));
    }

    private static String quote(String text) {
        return "\"" + PciAddress.printable(text) + "\"";
    }
}
