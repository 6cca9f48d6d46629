package dev.vgpu.core.internal;

import java.time.Duration;

/**
 * Go's {@code time.ParseDuration} grammar, exactly.
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
 *
 * <p>The rescan-interval policy built on this grammar is {@code RescanInterval.parse}.
 */
public final class Durations {

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
     * Go's {@code ParseDuration} to nanoseconds: the sign, the bare {@code 0}, then one {@link #component} after
     * another, each added to the unsigned total as Go adds them.
     *
     * <p>Every magnitude in this parser is an unsigned 64-bit value compared with {@link Long#compareUnsigned}, as
     * in Go.
     *
     * @throws IllegalArgumentException with Go's message, quoting the input, when it is not a valid duration
     */
    static long parseGoNanos(String text) {
        if (text == null) {
            throw new IllegalArgumentException("time: invalid duration \"null\"");
        }
        Cursor in = new Cursor(text);
        boolean negative = in.sign();
        if (in.restIsZero()) {
            return 0;
        }
        if (in.atEnd()) {
            throw invalid(text);
        }
        long total = 0;
        while (!in.atEnd()) {
            total += component(in); // may wrap around 2^64 exactly as Go's uint64 addition does
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
     * One {@code <number><unit>} pair in nanoseconds, at most 2^63: the {@link #leadingInt}, an optional point and
     * {@link #leadingFraction}, then the {@link #unit}.
     */
    private static long component(Cursor in) {
        if (!in.atNumber()) {
            throw invalid(in.text);
        }
        int start = in.at;
        long whole = leadingInt(in);
        boolean hadWhole = in.at > start;
        Fraction fraction = Fraction.NONE;
        boolean hadFraction = false;
        if (in.skip('.')) {
            int fractionStart = in.at;
            fraction = leadingFraction(in);
            hadFraction = in.at > fractionStart;
        }
        if (!hadWhole && !hadFraction) {
            throw invalid(in.text);
        }
        return scaled(in.text, whole, fraction, unit(in));
    }

    /** Go's {@code leadingInt}: digits as an unsigned value, failing once it would exceed 2^63. */
    private static long leadingInt(Cursor in) {
        long value = 0;
        while (in.atDigit()) {
            if (Long.compareUnsigned(value, Long.divideUnsigned(TWO_POW_63, 10)) > 0) {
                throw invalid(in.text);
            }
            value = value * 10 + in.takeDigit();
            if (Long.compareUnsigned(value, TWO_POW_63) > 0) {
                throw invalid(in.text);
            }
        }
        return value;
    }

    /**
     * Go's {@code leadingFraction}: the digits after the point and their scale, silently dropping the digits that
     * would take the value past 2^63 (they are still consumed). Never fails.
     */
    private static Fraction leadingFraction(Cursor in) {
        long digits = 0;
        double scale = 1;
        boolean overflow = false;
        while (in.atDigit()) {
            int digit = in.takeDigit();
            if (overflow) {
                continue;
            }
            if (Long.compareUnsigned(digits, Long.MAX_VALUE / 10) > 0) {
                overflow = true;
                continue;
            }
            long next = digits * 10 + digit;
            if (Long.compareUnsigned(next, TWO_POW_63) > 0) {
                overflow = true;
                continue;
            }
            digits = next;
            scale *= 10;
        }
        return new Fraction(digits, scale);
    }

    /** The unit after a number: everything up to the next digit or point, in nanoseconds. */
    private static long unit(Cursor in) {
        String unitText = in.takeUnit();
        if (unitText.isEmpty()) {
            throw new IllegalArgumentException("time: missing unit in duration " + GoText.quote(in.text));
        }
        long unit = unitNanos(unitText);
        if (unit < 0) {
            throw new IllegalArgumentException("time: unknown unit " + GoText.quote(unitText) + " in duration "
                    + GoText.quote(in.text));
        }
        return unit;
    }

    /** {@code whole} units plus the fraction of one, failing past 2^63 as Go's two checks do. */
    private static long scaled(String text, long whole, Fraction fraction, long unit) {
        if (Long.compareUnsigned(whole, Long.divideUnsigned(TWO_POW_63, unit)) > 0) {
            throw invalid(text);
        }
        long value = whole * unit;
        if (fraction.digits() != 0) {
            // Go: v += uint64(float64(f) * (float64(unit) / scale)); the added part is below one unit.
            value += (long) (unsignedToDouble(fraction.digits()) * ((double) unit / fraction.scale()));
            if (Long.compareUnsigned(value, TWO_POW_63) > 0) {
                throw invalid(text);
            }
        }
        return value;
    }

    /**
     * The digits after a point, as an unsigned value of at most 2^63, and 10 to the power of how many were kept.
     */
    private record Fraction(long digits, double scale) {
        static final Fraction NONE = new Fraction(0, 1);
    }

    /** A position in the text being parsed; confined to one call of {@link #parseGoNanos}. */
    private static final class Cursor {
        final String text;
        int at;

        Cursor(String text) {
            this.text = text;
        }

        /** Skips a leading {@code +} or {@code -}; true for {@code -}. */
        boolean sign() {
            if (!text.isEmpty() && (text.charAt(0) == '-' || text.charAt(0) == '+')) {
                at = 1;
                return text.charAt(0) == '-';
            }
            return false;
        }

        boolean restIsZero() {
            return text.length() - at == 1 && text.charAt(at) == '0';
        }

        boolean atEnd() {
            return at == text.length();
        }

        /** Whether a number starts here: a digit or a point. */
        boolean atNumber() {
            return !atEnd() && (text.charAt(at) == '.' || isDigit(text.charAt(at)));
        }

        boolean atDigit() {
            return !atEnd() && isDigit(text.charAt(at));
        }

        int takeDigit() {
            return text.charAt(at++) - '0';
        }

        boolean skip(char c) {
            if (!atEnd() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        /** Everything up to the next digit, point or the end; empty when a digit or point comes at once. */
        String takeUnit() {
            int start = at;
            while (!atEnd() && !atNumber()) {
                at++;
            }
            return text.substring(start, at);
        }
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
