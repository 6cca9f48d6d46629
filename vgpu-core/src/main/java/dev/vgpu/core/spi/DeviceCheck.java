package dev.vgpu.core.spi;

import java.util.Objects;

/**
 * The answer of {@link DeviceSource#recheck}: is a device still what its source advertised?
 *
 * @param unchanged true when the device is still what was advertised
 * @param was       what it was when advertised, in words (e.g. {@code "vGPU type 1152"}); empty when unchanged
 * @param now       what it is now, in words (e.g. {@code "vGPU type 1155"}, {@code "gone"}); empty when unchanged
 */
public record DeviceCheck(boolean unchanged, String was, String now) {

    private static final DeviceCheck UNCHANGED = new DeviceCheck(true, "", "");

    /** Checks that a change says what changed. */
    public DeviceCheck {
        Objects.requireNonNull(was, "was");
        Objects.requireNonNull(now, "now");
        if (!unchanged && (was.isEmpty() || now.isEmpty())) {
            throw new IllegalArgumentException("a changed device needs what it was and what it is now");
        }
    }

    /** The device is still what was advertised. */
    public static DeviceCheck same() {
        return UNCHANGED;
    }

    /** The device changed since it was advertised. */
    public static DeviceCheck changed(String was, String now) {
        return new DeviceCheck(false, was, now);
    }

    /** One sentence for a log line or an error, e.g. {@code device 0000:1b:00.4 was vGPU type 1152 when advertised and is now vGPU type 1155}. */
    public String describe(String deviceId) {
        return unchanged ? "device " + deviceId + " is unchanged"
                : "device " + deviceId + " was " + was + " when advertised and is now " + now;
    }
}
