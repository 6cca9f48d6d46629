package dev.vgpu.core.spi;

import dev.vgpu.core.Device;
import dev.vgpu.core.Skipped;
import java.util.ArrayList;
import java.util.List;

/**
 * What one source found in one scan: the devices to advertise and the ones it skipped, with reasons.
 *
 * @param devices devices to advertise, in any order
 * @param skipped devices seen but not advertised
 */
public record Discovery(List<Device> devices, List<Skipped> skipped) {

    /** Copies both lists. */
    public Discovery {
        devices = List.copyOf(devices);
        skipped = List.copyOf(skipped);
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

        /** An immutable copy of what was collected. */
        public Discovery build() {
            return new Discovery(devices, skipped);
        }
    }
}
