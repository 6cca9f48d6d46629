package dev.vgpu.sysfs;

import dev.vgpu.core.Device;
import dev.vgpu.core.Skipped;
import dev.vgpu.core.spi.AttributeFiles;
import dev.vgpu.core.spi.Discovery;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;

/**
 * The state of one source's scan: what it found and skipped, and the log it reports to. Confined to the thread
 * running {@code discover}.
 *
 * <p>Every device is added with the full name it was grouped by (a profile, an mdev type name, a pci.ids name).
 * Resource names are cut to 63 characters, so two different full names can end up as one resource name; such
 * devices are never merged into one resource: {@link #done()} skips all of them with a reason naming every
 * full name involved.
 *
 * <p>Skips are bounded: a hostile bus with 100,000 bad entries must not hold 100,000 records. The scan lists the
 * {@value Discovery#LISTED_SKIPS} skips that sort first by id and reason (so equal hosts still give equal
 * discoveries) and only counts the others, by reason class (the reason with the device id taken out, at most
 * {@value #REASON_CLASSES} classes); WARN lines stop after as many skips, and {@link #done()} logs one line with
 * the counts.
 */
final class Scan {

    private final String source;
    private final Logger log;
    private final List<Device> devices = new ArrayList<>();
    static final int REASON_CLASSES = 16;
    private static final Comparator<Skipped> ORDER = Comparator.comparing(Skipped::id).thenComparing(Skipped::reason);

    /** The listed skips, the last in {@link #ORDER} on top so that it is the one to drop. */
    private final PriorityQueue<Skipped> skipped = new PriorityQueue<>(ORDER.reversed());
    /** Reason class → skips counted but not listed. */
    private final Map<String, Integer> unlisted = new TreeMap<>();
    private int unlistedCount;
    private int logged;
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
        if (logged++ < Discovery.LISTED_SKIPS) {
            log.warn("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
        } else {
            log.debug("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
        }
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
        if (e instanceof NoSuchFileException && !AttributeFiles.isDirectory(deviceDir)) {
            skipQuietly(id, what + ": vanished during the scan");
        } else {
            skip(id, what + ": " + SysfsFiles.describe(e));
        }
    }

    private void record(String id, String reason) {
        skipped.add(new Skipped(id, source, reason));
        if (skipped.size() > Discovery.LISTED_SKIPS) {
            Skipped dropped = skipped.poll();
            String reasonClass = dropped.id().isEmpty() ? dropped.reason() : dropped.reason().replace(dropped.id(), "…");
            if (!unlisted.containsKey(reasonClass) && unlisted.size() >= REASON_CLASSES) {
                reasonClass = "other reasons";
            }
            unlisted.merge(SysfsFiles.printable(reasonClass), 1, Integer::sum);
            unlistedCount++;
        }
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
        log.debug("{}: scan found {} devices, skipped {}", source, devices.size(), skipped.size() + unlistedCount);
        if (unlistedCount > 0) {
            log.warn("{}: {} more devices skipped than listed (the first {} by id are): {}", source, unlistedCount,
                    Discovery.LISTED_SKIPS, unlisted.entrySet().stream().map(e -> e.getValue() + " × " + e.getKey())
                            .collect(Collectors.joining("; ")));
        }
        devices.sort(Comparator.comparing(Device::id));
        List<Skipped> listed = new ArrayList<>(skipped);
        listed.sort(ORDER);
        return new Discovery(devices, listed, unlistedCount);
    }
}
