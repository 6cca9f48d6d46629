package dev.vgpu.dra;

import java.util.List;
import java.util.Objects;

/**
 * The {@code spec} of one {@code resource.k8s.io/v1} ResourceSlice of this node (docs/DRA.md §4), as plain values:
 * what a publisher sends, without an API client. Node selection is always {@code nodeName}.
 *
 * @param driver             the driver
 * @param pool               the pool's name (the node name)
 * @param generation         the pool's generation, at least 1
 * @param resourceSliceCount how many slices the pool has at this generation, at least 1
 * @param nodeName           the node
 * @param devices            at most {@value #MAX_DEVICES} devices, names unique
 */
public record SliceSpec(DriverName driver, String pool, long generation, int resourceSliceCount, String nodeName,
                        List<SliceDevice> devices) {

    /** The most devices one slice may have (without taints, counters or list attributes). */
    public static final int MAX_DEVICES = 128;
    /** The most devices one slice may have when any of them has a taint. */
    public static final int MAX_TAINTED_DEVICES = 64;

    /** Validates the counts and copies the list. */
    public SliceSpec {
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(nodeName, "nodeName");
        if (generation < 1 || resourceSliceCount < 1) {
            throw new IllegalArgumentException("generation and resourceSliceCount start at 1");
        }
        devices = List.copyOf(devices);
        if (devices.size() > MAX_DEVICES) {
            throw new IllegalArgumentException("a slice has at most " + MAX_DEVICES + " devices, got "
                    + devices.size());
        }
        if (devices.size() > MAX_TAINTED_DEVICES && devices.stream().anyMatch(d -> !d.taints().isEmpty())) {
            throw new IllegalArgumentException("a slice with tainted devices has at most " + MAX_TAINTED_DEVICES
                    + " devices, got " + devices.size());
        }
        if (devices.stream().map(SliceDevice::name).distinct().count() != devices.size()) {
            throw new IllegalArgumentException("device names repeat in one slice");
        }
    }
}
