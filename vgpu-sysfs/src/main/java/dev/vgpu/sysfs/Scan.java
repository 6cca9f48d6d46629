package dev.vgpu.sysfs;

import dev.vgpu.core.Device;
import dev.vgpu.core.Skipped;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
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
 *
 * <p>Rescans log what changed: a WARN-eligible skip (one of the first {@value Discovery#LISTED_SKIPS} in walk
 * order, counted as before) is logged at WARN only when the source instance's previous completed scan did not
 * skip the same id with the same reason, else at DEBUG as unchanged; the summary line likewise when its text
 * differs from that scan's. Only log levels depend on the earlier scan, never the {@link Discovery}. The previous
 * scan is read once, when this scan is created, and this scan's own log is published when {@link #done()}
 * completes; see {@link SkipLog} for which thread owns what.
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
    /** What the source instance's last completed scan logged; read once, when this scan starts. */
    private final SkipLog.Last previous;
    private final SkipLog skipLog;
    private final Path root;
    /** The scan's host: asked whether a device directory is still there when a read of it failed. */
    private final Host host;
    /** This scan's WARN-eligible skips, published by {@link #done()}; at most {@value Discovery#LISTED_SKIPS}. */
    private final Set<SkipLog.Key> eligible = new HashSet<>();
    /** Resource name → the full names its devices were grouped by. */
    private final Map<String, Set<String>> claims = new HashMap<>();

    /**
     * Starts a scan.
     *
     * @param skipLog the source instance's memory of its last completed scan, read now and replaced by {@link #done()}
     * @param host    the host scanned: what the last scan logged counts only for the same root
     */
    Scan(String source, Logger log, SkipLog skipLog, Host host) {
        this.source = source;
        this.log = log;
        this.skipLog = skipLog;
        this.host = host;
        this.root = host.root();
        this.previous = skipLog.last(root);
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

    /**
     * Skips a device a user could fix (bad configuration, garbage files): logged at WARN, unless the previous
     * completed scan skipped the same id for the same reason (then at DEBUG, as unchanged).
     */
    void skip(String id, String reason) {
        if (logged++ < Discovery.LISTED_SKIPS) {
            SkipLog.Key key = new SkipLog.Key(id, reason);
            eligible.add(key);
            if (!previous.skips().contains(key)) {
                log.warn("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
            } else if (log.isDebugEnabled()) {
                log.debug("{}: still skipping {}: {}", source, SysfsFiles.printable(id), reason);
            }
        } else if (log.isDebugEnabled()) {
            log.debug("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
        }
        record(id, reason);
    }

    /** Skips a device for a reason nobody needs to act on (it vanished mid-scan): logged at DEBUG. */
    void skipQuietly(String id, String reason) {
        if (log.isDebugEnabled()) {
            log.debug("{}: skipping {}: {}", source, SysfsFiles.printable(id), reason);
        }
        record(id, reason);
    }

    /**
     * Skips a device whose read failed: quietly when its directory is gone (it vanished mid-scan), otherwise at
     * WARN with what failed.
     */
    void failed(String id, String what, Path deviceDir, IOException e) {
        if (e instanceof NoSuchFileException && !host.files().isDirectory(deviceDir, host.scanScope())) {
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

    /**
     * What the scan found, sorted by id so that equal hosts give equal discoveries whatever the walk order; then
     * publishes this scan's log of skips to the source instance's {@link SkipLog}.
     */
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
        String summary = null;
        if (unlistedCount > 0) {
            summary = unlistedCount + " more devices skipped than listed (the first " + Discovery.LISTED_SKIPS
                    + " by id are): " + unlisted.entrySet().stream().map(e -> e.getValue() + " × " + e.getKey())
                            .collect(Collectors.joining("; "));
            if (!summary.equals(previous.summary())) {
                log.warn("{}: {}", source, summary);
            } else {
                log.debug("{}: unchanged since the last scan: {}", source, summary);
            }
        }
        devices.sort(Comparator.comparing(Device::id));
        List<Skipped> listed = new ArrayList<>(skipped);
        listed.sort(ORDER);
        Discovery discovery = new Discovery(devices, listed, unlistedCount);
        // Last: a scan that throws before here publishes nothing.
        skipLog.publish(new SkipLog.Last(root, eligible, summary));
        return discovery;
    }
}
