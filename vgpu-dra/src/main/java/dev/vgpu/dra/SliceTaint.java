package dev.vgpu.dra;

import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A taint on one ResourceSlice device ({@code resource.k8s.io/v1} {@code DeviceTaint}, docs/DRA.md §4): the
 * scheduler does not allocate a device with a {@code NoSchedule} taint to a claim that does not tolerate it. The
 * time it was added is the publisher's business, not part of the value.
 *
 * @param key    a qualified name, e.g. {@code gpu.vgpu.dev/unhealthy}
 * @param value  a label value, possibly empty
 * @param effect {@code None}, {@code NoSchedule} or {@code NoExecute}
 */
public record SliceTaint(String key, String value, String effect) {

    /** The most taints one device may have. */
    public static final int MAX_PER_DEVICE = 16;

    private static final Set<String> EFFECTS = Set.of("None", "NoSchedule", "NoExecute");
    private static final Pattern KEY = Pattern.compile(
            "((?=.{1,253}/)[a-z0-9]([a-z0-9.-]*[a-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?");
    private static final Pattern VALUE = Pattern.compile("([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?");

    /** Validates the key, value and effect as the API server does. */
    public SliceTaint {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(effect, "effect");
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("a taint key is a qualified name, got " + key);
        }
        if (!VALUE.matcher(value).matches()) {
            throw new IllegalArgumentException("a taint value is a label value, got " + value);
        }
        if (!EFFECTS.contains(effect)) {
            throw new IllegalArgumentException("a taint effect is None, NoSchedule or NoExecute, got " + effect);
        }
    }

    /** The taint this driver puts on an unhealthy device: {@code <driver>/unhealthy}, {@code NoSchedule}. */
    public static SliceTaint unhealthy(DriverName driver) {
        return new SliceTaint(driver.value() + "/unhealthy", "", "NoSchedule");
    }
}
