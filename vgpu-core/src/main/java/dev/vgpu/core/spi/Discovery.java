package dev.vgpu.core.spi;

import dev.vgpu.core.Device;
import dev.vgpu.core.Skipped;
import java.util.ArrayList;
import java.util.List;

/**
 * What one source found in one scan: the devices to advertise and the ones it skipped, with reasons.
 *
 * <p>A hostile host can show a source any number of bad entries, so a source may list only a sample of its skips
 * and count the rest: {@code unlistedSkips} says how many skips {@code skipped} leaves out (the built-in sources
 * list the first {@value #LISTED_SKIPS}).
 *
 * @param devices       devices to advertise, in any order
 * @param skipped       devices seen but not advertised (all of them, or a sample)
 * @param unlistedSkips how many more devices were skipped than {@code skipped} lists; 0 when it lists all
 */
public record Discovery(List<Device> devices, List<Skipped> skipped, int unlistedSkips) {

    /** How many skips the built-in sources list before they only count. */
    public static final int LISTED_SKIPS = 100;

    /** Copies both lists. */
    public Discovery {
        devices = List.copyOf(devices);
        skipped = List.copyOf(skipped);
        if (unlistedSkips < 0) {
            throw new IllegalArgumentException("unlisted skips " + unlistedSkips + " is negative");
        }
    }

    /** A discovery that lists every skip. */
    public Discovery(List<Device> devices, List<Skipped> skipped) {
        this(devices, skipped, 0);
    }

    /** Every skip, listed or not. */
    public int skippedCount() {
        return skipped.size() + unlistedSkips;
    }

    /** A discovery that found nothing. */
    public static Discovery empty() {
        return new Discovery(List.of(), List.of());
    }

    /** Starts an empty, mutable collector; not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** Collects devices and skips during one scan. */
    public static final class Builder {
        private final List<Device> devices = new ArrayList<>();
        private final List<Skipped> skipped = new ArrayList<>();
        private int unlisted;

        private Builder() {
        }

        /** Adds a device to advertise. */
        public Builder add(Device device) {
            devices.add(device);
            return this;
        }

        /** Records a skipped device. */
        public Builder skip(String id, String source, String reason) {
            skipped.add(new Skipped(id, source, reason));
            return this;
        }

        /** Records a skipped device. */
        public Builder skip(Skipped skip) {
            skipped.add(skip);
            return this;
        }

        /** Counts skips that are not listed. */
        public Builder unlisted(int count) {
            unlisted = Math.addExact(unlisted, count);
            return this;
        }

        /** An immutable copy of what was collected. */
        public Discovery build() {
            return new Discovery(devices, skipped, unlisted);
        }
    }
}
