package dev.vgpu.sysfs;

import dev.vgpu.core.Device;
import dev.vgpu.core.Skipped;
import dev.vgpu.core.spi.Discovery;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;

/**
 * The state of one source's scan: what it found and skipped, and the log it reports to. Confined to the thread
 * running {@code discover}.
 */
final class Scan {

    private final String source;
    private final Logger log;
    private final List<Device> devices = new ArrayList<>();
    private final List<Skipped> skipped = new ArrayList<>();

    Scan(String source, Logger log) {
        this.source = source;
        this.log = log;
    }

    void add(Device device) {
        log.debug("{}: advertising {} as {}", source, device.id(), device.resource());
        devices.add(device);
    }

    /** Skips a device a user could fix (bad configuration, garbage files): logged at WARN. */
    void skip(String id, String reason) {
        log.warn("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
        record(id, reason);
    }

    /** Skips a device for a reason nobody needs to act on (it vanished mid-scan): logged at DEBUG. */
    void skipQuietly(String id, String reason) {
        log.debug("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
        record(id, reason);
    }

    /**
     * Skips a device whose read failed: quietly when its directory is gone (it vanished mid-scan), otherwise at
     * WARN with what failed.
     */
    void failed(String id, String what, Path deviceDir, IOException e) {
        if (e instanceof NoSuchFileException && !Files.isDirectory(deviceDir)) {
            skipQuietly(id, what + ": vanished during the scan");
        } else {
            skip(id, what + ": " + SysfsFiles.describe(e));
        }
    }

    private void record(String id, String reason) {
        skipped.add(new Skipped(id, source, reason));
    }

    /** Notes, at DEBUG, a function this source does not advertise and does not count as skipped. */
    void ignore(String id, String why) {
        log.debug("{}: ignoring {}: {}", source, id, why);
    }

    /** What the scan found, sorted by id so that equal hosts give equal discoveries whatever the walk order. */
    Discovery done() {
        log.debug("{}: scan found {} devices, skipped {}", source, devices.size(), skipped.size());
        devices.sort(Comparator.comparing(Device::id));
        skipped.sort(Comparator.comparing(Skipped::id).thenComparing(Skipped::reason));
        return new Discovery(devices, skipped);
    }
}
