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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;

/**
 * The state of one source's scan: what it found and skipped, and the log it reports to. Confined to the thread
 * running {@code discover}.
 *
 * <p>Every device is added with the full name it was grouped by (a profile, an mdev type name, a pci.ids name).
 * Resource names are cut to 63 characters, so two different full names can end up as one resource name; such
 * devices are never merged into one resource: {@link #done()} skips all of them with a reason naming every
 * full name involved.
 */
final class Scan {

    private final String source;
    private final Logger log;
    private final List<Device> devices = new ArrayList<>();
    private final List<Skipped> skipped = new ArrayList<>();
    /** Resource name → the full names its devices were grouped by. */
    private final Map<String, Set<String>> claims = new HashMap<>();

    Scan(String source, Logger log) {
        this.source = source;
        this.log = log;
    }

    /**
     * Adds a device to advertise.
     *
     * @param fullName the name its resource name was made from, before sanitizing and cutting
     */
    void add(Device device, String fullName) {
        log.debug("{}: advertising {} as {}", source, device.id(), device.resource());
        devices.add(device);
        claims.computeIfAbsent(device.resource().name(), k -> new TreeSet<>()).add(fullName);
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
        claims.forEach((resource, names) -> {
            if (names.size() > 1) {
                String reason = "the names \"" + String.join("\", \"", names.stream().map(SysfsFiles::printable)
                        .toList()) + "\" all become resource name " + resource
                        + " (cut to 63 characters), so none of their devices is advertised";
                devices.removeIf(d -> {
                    if (!d.resource().name().equals(resource)) {
                        return false;
                    }
                    skip(d.id(), reason);
                    return true;
                });
            }
        });
        log.debug("{}: scan found {} devices, skipped {}", source, devices.size(), skipped.size());
        devices.sort(Comparator.comparing(Device::id));
        skipped.sort(Comparator.comparing(Skipped::id).thenComparing(Skipped::reason));
        return new Discovery(devices, skipped);
    }
}
