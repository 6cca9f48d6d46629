package dev.vgpu.core;

import java.time.Duration;
import java.util.Optional;

/**
 * Go's {@code time.ParseDuration} grammar, exactly, and the rescan-interval policy built on it.
 *
 * <p>Grammar: an optional {@code +} or {@code -}, then one or more {@code <number><unit>} pairs with no
 * spaces; a number is digits with an optional fraction ({@code 1.}, {@code .5}, {@code 1.5}); units are
 * {@code ns}, {@code us}, {@code µs} (U+00B5), {@code μs} (U+03BC), {@code ms}, {@code s}, {@code m},
 * {@code h}. The bare string {@code 0} (with an optional sign) is zero. The value must fit in a signed 64-bit
 * count of nanoseconds; fractions are truncated to whole nanoseconds. Values, limits and error messages are
 * Go's, including its arithmetic: the magnitude is accumulated as an unsigned 64-bit number that may reach
 * 2<sup>63</sup> (so {@code -9223372036854775808ns} is valid), fractions are scaled in double precision, and
 * (a Go quirk kept on purpose) two components of exactly 2<sup>63</sup> ns each wrap around to zero. Error
 * messages quote the input as Go does: control and non-ASCII characters become {@code \xNN} escapes.
 */
public final class Durations {

    /** The shortest rescan interval; positive values below it are raised to it. */
    public static final Duration MIN_RESCAN_INTERVAL = Duration.ofSeconds(5);

    /** 2^63 as an unsigned 64-bit value (Go's {@code 1<<63}). */
    private static final long TWO_POW_63 = Long.MIN_VALUE;
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
        if (s.length() - i == 1 && s.charAt(i) == '0') {
            return 0;
        }
        if (i == s.length()) {
            throw invalid(text);
        }
        // Every magnitude below is an unsigned 64-bit value, compared with Long.compareUnsigned, as in Go.
        long total = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != '.' && !isDigit(c)) {
                throw invalid(text);
            }
            // leadingInt: digits, failing once the value would exceed 2^63
            int start = i;
            long whole = 0;
            while (i < s.length() && isDigit(s.charAt(i))) {
                if (Long.compareUnsigned(whole, Long.divideUnsigned(TWO_POW_63, 10)) > 0) {
                    throw invalid(text);
                }
                whole = whole * 10 + (s.charAt(i) - '0');
                if (Long.compareUnsigned(whole, TWO_POW_63) > 0) {
                    throw invalid(text);
                }
                i++;
            }
            boolean hadWhole = i > start;
            // leadingFraction: digits, silently dropping precision once the value would exceed 2^63
            long fraction = 0;
            double scale = 1;
            boolean hadFraction = false;
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                int fractionStart = i;
                boolean overflow = false;
                for (; i < s.length() && isDigit(s.charAt(i)); i++) {
                    if (overflow) {
                        continue;
                    }
                    if (Long.compareUnsigned(fraction, Long.MAX_VALUE / 10) > 0) {
                        overflow = true;
                        continue;
                    }
                    long next = fraction * 10 + (s.charAt(i) - '0');
                    if (Long.compareUnsigned(next, TWO_POW_63) > 0) {
                        overflow = true;
                        continue;
                    }
                    fraction = next;
                    scale *= 10;
                }
                hadFraction = i > fractionStart;
            }
            if (!hadWhole && !hadFraction) {
                throw invalid(text);
            }
            int unitStart = i;
            while (i < s.length() && s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
                i++;
            }
            if (unitStart == i) {
                throw new IllegalArgumentException("time: missing unit in duration " + GoText.quote(text));
            }
            String unitText = s.substring(unitStart, i);
            long unit = unitNanos(unitText);
            if (unit < 0) {
                throw new IllegalArgumentException("time: unknown unit " + GoText.quote(unitText) + " in duration "
                        + GoText.quote(text));
            }
            if (Long.compareUnsigned(whole, Long.divideUnsigned(TWO_POW_63, unit)) > 0) {
                throw invalid(text);
            }
            long value = whole * unit;
            if (fraction != 0) {
                // Go: v += uint64(float64(f) * (float64(unit) / scale)); the added part is below one unit.
                value += (long) (unsignedToDouble(fraction) * ((double) unit / scale));
                if (Long.compareUnsigned(value, TWO_POW_63) > 0) {
                    throw invalid(text);
                }
            }
            total += value; // may wrap around 2^64 exactly as Go's uint64 addition does
            if (Long.compareUnsigned(total, TWO_POW_63) > 0) {
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
     * below {@link #MIN_RESCAN_INTERVAL} is raised to it. Surrounding whitespace is removed first, as Go's
     * {@code strings.TrimSpace} does.
     *
     * @param raw the value as configured, may be null
     * @throws IllegalArgumentException quoting the input when it is malformed or negative
     */
    public static RescanInterval rescanInterval(String raw) {
        if (raw == null) {
            return RescanInterval.DISABLED;
        }
        String text = GoText.trimSpace(raw);
        if (text.isEmpty()) {
            return RescanInterval.DISABLED;
        }
        Duration parsed = parseGo(text);
        if (parsed.isNegative()) {
            throw new IllegalArgumentException("negative duration " + GoText.quote(text)
                    + " is not a rescan interval");
        }
        if (parsed.isZero()) {
            return RescanInterval.DISABLED;
        }
        if (parsed.compareTo(MIN_RESCAN_INTERVAL) < 0) {
            return new RescanInterval(MIN_RESCAN_INTERVAL, Optional.of(parsed));
        }
        return new RescanInterval(parsed, Optional.empty());
    }

    /**
     * Prints a duration exactly as Go's {@code Duration.String} does, e.g. {@code 1h0m0s}, {@code 1m30s},
     * {@code 1.5s}, {@code 1.1µs}, {@code 0s}; used in log lines so they echo the configured syntax. Durations
     * beyond Go's range (int64 nanoseconds) are printed with the same rules.
     */
    public static String formatGo(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        boolean negative = d.isNegative();
        // magnitude as unsigned seconds + nanos, safe for Duration's own minimum
        long seconds = d.getSeconds();
        long nanos = d.getNano();
        if (negative) {
            if (nanos == 0) {
                seconds = -seconds;
            } else {
                seconds = -(seconds + 1);
                nanos = NANOS_PER_SECOND - nanos;
            }
        }
        StringBuilder out = new StringBuilder(negative ? "-" : "");
        if (seconds == 0) {
            if (nanos < NANOS_PER_MICRO) {
                return out.append(nanos).append("ns").toString();
            }
            if (nanos < NANOS_PER_MILLI) {
                return appendFraction(out, nanos, 3).append("\u00b5s").toString();
            }
            return appendFraction(out, nanos, 6).append("ms").toString();
        }
        long hours = Long.divideUnsigned(seconds, 3600);
        long minutes = Long.remainderUnsigned(seconds, 3600) / 60;
        long secs = Long.remainderUnsigned(seconds, 60);
        if (hours != 0) {
            out.append(Long.toUnsignedString(hours)).append('h');
        }
        if (hours != 0 || minutes != 0) {
            out.append(minutes).append('m');
        }
        out.append(secs);
        if (nanos != 0) {
            out.append('.').append(trimTrailingZeros(String.format(java.util.Locale.ROOT, "%09d", nanos)));
        }
        return out.append('s').toString();
    }

    /** Appends {@code value / 10^precision} with the fraction's trailing zeros (and a bare point) left out. */
    private static StringBuilder appendFraction(StringBuilder out, long value, int precision) {
        long divisor = (long) Math.pow(10, precision);
        out.append(value / divisor);
        long fraction = value % divisor;
        if (fraction != 0) {
            String digits = String.format(java.util.Locale.ROOT, "%0" + precision + "d", fraction);
            out.append('.').append(trimTrailingZeros(digits));
        }
        return out;
    }

    private static String trimTrailingZeros(String digits) {
        int end = digits.length();
        while (end > 0 && digits.charAt(end - 1) == '0') {
            end--;
        }
        return digits.substring(0, end);
    }

    private static double unsignedToDouble(long value) {
        // a fraction never exceeds 2^63, the only "negative" value it can take
        return value == TWO_POW_63 ? 0x1p63 : (double) value;
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
        return new IllegalArgumentException("time: invalid duration " + GoText.quote(text));
    }
}
