package dev.vgpu.sysfs;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Re-checks a device's recorded identity against sysfs for the built-in sources' {@code recheck}. An identity
 * is {@code <kind>:<value>} (e.g. {@code mdev-type:nvidia-558}); the check re-reads the value and compares. Stateless.
 * (A vendor-VFIO VF records several values and has its own check, {@link VfIdentity}.)
 */
final class IdentityCheck {

    /** Reads the value as the host shows it now. */
    interface Reader {
        String read() throws IOException;
    }

    private final String kind;
    private final String words;

    /**
     * @param kind  the identity prefix without its colon, e.g. {@code vgpu-type}
     * @param words how a value is said in messages, e.g. {@code vGPU type}
     */
    IdentityCheck(String kind, String words) {
        this.kind = kind;
        this.words = words;
    }

    /** The identity to record for a value. */
    String identity(String value) {
        return kind + ":" + value;
    }

    /**
     * Compares the device's recorded value with what {@code reader} reads now.
     *
     * @param device     a device of the checking source
     * @param dir        the device's directory: when it is gone the device is "gone"
     * @param reader     reads the value now
     * @param emptyValue the value that means "nothing configured" (e.g. {@code 0}), or null when none does
     * @param empty      how to say that value in a message
     */
    DeviceCheck check(Device device, Path dir, Reader reader, String emptyValue, String empty) {
        Optional<String> recorded = device.identity().filter(i -> i.startsWith(kind + ":"))
                .map(i -> i.substring(kind.length() + 1));
        if (recorded.isEmpty()) {
            return DeviceCheck.same();
        }
        String was = words + " " + recorded.get();
        String now;
        try {
            now = reader.read();
        } catch (NoSuchFileException e) {
            return DeviceCheck.changed(was, Files.isDirectory(dir) ? "unreadable (" + SysfsFiles.describe(e) + ")"
                    : "gone");
        } catch (IOException | RuntimeException e) {
            return DeviceCheck.changed(was, "unreadable (" + (e instanceof IOException io ? SysfsFiles.describe(io)
                    : e.toString()) + ")");
        }
        if (now.equals(recorded.get())) {
            return DeviceCheck.same();
        }
        if (now.equals(emptyValue)) {
            return DeviceCheck.changed(was, empty);
        }
        return DeviceCheck.changed(was, words + " " + SysfsFiles.printable(now));
    }
}
