package dev.vgpu.core.internal;

import java.time.Duration;
import java.util.Locale;

/**
 * Go's {@code Duration.String}, for log lines and messages that echo durations in the syntax they are configured
 * in ({@code 1h0m0s}, {@code 1m30s}, {@code 1.5s}, {@code 1.1µs}, {@code 0s}). Durations beyond Go's range (int64
 * nanoseconds) are printed with the same rules. Not API: the parsing half is {@link Durations}.
 * Stateless.
 */
public final class GoDurations {

    private static final long NANOS_PER_MICRO = 1_000L;
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private GoDurations() {
    }

    /** The duration exactly as Go's {@code Duration.String} prints it. */
    public static String format(Duration d) {
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
            out.append('.').append(trimTrailingZeros(String.format(Locale.ROOT, "%09d", nanos)));
        }
        return out.append('s').toString();
    }

    /** Appends {@code value / 10^precision} with the fraction's trailing zeros (and a bare point) left out. */
    private static StringBuilder appendFraction(StringBuilder out, long value, int precision) {
        long divisor = (long) Math.pow(10, precision);
        out.append(value / divisor);
        long fraction = value % divisor;
        if (fraction != 0) {
            String digits = String.format(Locale.ROOT, "%0" + precision + "d", fraction);
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
}
