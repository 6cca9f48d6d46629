package dev.vgpu.core.spi;

import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.hostfiles.ScanRound;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs every source once and builds the next snapshot. Fail safe: a source that throws (or returns devices that
 * contradict each other) keeps the devices it contributed to the previous snapshot for this round, and the other
 * sources still move on.
 * <pre>{@code
 * Scanner scanner = Scanner.of(Path.of("/"), DeviceSources.load());
 * Snapshot first = scanner.scan(Snapshot.empty());
 * Snapshot next = scanner.scan(first);          // a failing source keeps its devices from first
 * }</pre>
 * Each scan gets a fresh {@link Host}: a new {@link ScanScope} shared by every source of that scan (a
 * {@link ScanRound} of the host's reader, which the scan's thread holds open until the scan ends), and a memoizing
 * view of the vGPU type resolver, so each physical GPU is asked at most once per scan.
 *
 * <p>Logs state changes, not rounds (docs/RELIABILITY.md): one WARN when a source starts failing (or fails for
 * another reason), one INFO when it answers again; a source that goes on failing for the same reason is DEBUG.
 * Reasons are in words ({@link #inWords(Throwable)}), never an exception's class name.
 *
 * <p>Stateless apart from its configuration and that memory of failing sources (a concurrent map); {@link #scan}
 * may be called from any thread, and callers that feed a {@link dev.vgpu.core.RescanLoop} let its thread make every
 * scan after the first.
 */
public final class Scanner {

    private static final Logger LOG = LoggerFactory.getLogger(Scanner.class);

    /** Root, helpers and state directory of every scan; its own scan scope is never used. */
    private final Host base;
    private final List<DeviceSource> sources;
    /** Asked once at the start of every scan; what it gives applies to that whole scan. */
    private final Supplier<DeviceRules> rules;
    /** Cap of {@link #expectedScopeKeys}. */
    private static final int MAX_EXPECTED_SCOPE_KEYS = 1 << 16;
    /** About how many keys the last scan's scope held: sizes the next one's (a hint; racing scans may lose one). */
    private volatile int expectedScopeKeys = 16;
    /** Source name → why it failed and in how many scans in a row; present only while it fails. */
    private final Map<String, Failing> failing = new ConcurrentHashMap<>();
    /** Whether a rename that would merge devices across sources or attachments keeps them under their own names. */
    private final boolean namesAsAttributes;
    /** Ids of the devices kept under their own name, as last said (one WARN when one starts to be). */
    private final Set<String> keptUnrenamed = ConcurrentHashMap.newKeySet();

    private record Failing(String reason, long scans) {
    }

    /**
     * A scanner of the host under {@code hostRoot}.
     *
     * @param hostRoot  the directory that stands for the host's {@code /}
     * @param pciIds    names for passthrough resources ({@link PciIds#empty()} for numeric names)
     * @param vgpuTypes vGPU type names per physical GPU ({@link VgpuTypeResolver#none()} without NVML)
     * @param sources   the sources to run, in this order (usually {@link DeviceSources#load()}); an empty list is
     *                  allowed but logged as a warning, because nothing will ever be discovered
     */
    public Scanner(Path hostRoot, PciIds pciIds, VgpuTypeResolver vgpuTypes, List<DeviceSource> sources) {
        this(Host.of(hostRoot).withPciIds(pciIds).withVgpuTypes(vgpuTypes), sources);
    }

    /**
     * A scanner of {@code host}: its root, pci.ids names, vGPU type resolver and {@link Host#stateDirectory() state
     * directory} are given to every scan, each with a fresh scan scope (the host's own scope is not used).
     * <pre>{@code
     * Scanner scanner = new Scanner(Host.of(Path.of("/")).withStateDirectory(Path.of("/var/lib/vgpu")),
     *         DeviceSources.load());
     * }</pre>
     *
     * @param host    the host to scan
     * @param sources the sources to run, in this order (an empty list is logged as a warning)
     */
    public Scanner(Host host, List<DeviceSource> sources) {
        this(host, sources, DeviceRules::none);
    }

    /**
     * A scanner of {@code host} that applies an operator's {@link DeviceRules} (exclusions, renames) to what every
     * source finds, before the snapshot is built: so a renamed device competes for its new name under the same
     * rules as any other (a name two sources produce, or a mix of attachments, is a skip saying so). The rules are
     * asked for once per scan, so a new configuration applies from the next scan on.
     * <pre>{@code
     * AtomicReference<DeviceRules> rules = new AtomicReference<>(DeviceRules.none());
     * Scanner scanner = new Scanner(host, DeviceSources.load(), rules::get);
     * }</pre>
     * A source that fails keeps its previous devices as they were advertised, under the rules of that scan.
     *
     * @param host    the host to scan
     * @param sources the sources to run, in this order (an empty list is logged as a warning)
     * @param rules   the rules in force; asked at the start of each scan, must not return null
     */
    public Scanner(Host host, List<DeviceSource> sources, Supplier<DeviceRules> rules) {
        this(host, sources, rules, false);
    }

    private Scanner(Host host, List<DeviceSource> sources, Supplier<DeviceRules> rules, boolean namesAsAttributes) {
        this.namesAsAttributes = namesAsAttributes;
        this.base = Objects.requireNonNull(host, "host").withScanScope(ScanScope.none());
        this.sources = List.copyOf(sources);
        this.rules = Objects.requireNonNull(rules, "rules");
        if (this.sources.isEmpty()) {
            LOG.warn("NO DEVICE SOURCES: nothing will ever be discovered. Put vgpu-sysfs (the built-in sources) or a "
                    + "jar that provides dev.vgpu.core.spi.DeviceSource on the class path or module path.");
        }
    }

    /**
     * This scanner for an adapter whose resource names are attributes of each device rather than sockets (the DRA
     * plugin publishes every device on its own): a device that an operator's rename would put under a name another
     * source produces, or beside devices attached otherwise, keeps the name its source gave it, with one WARN when
     * that starts, instead of becoming a skip. The device plugin's rule (one socket per name, one source and one
     * attachment behind it) would withdraw it; here no rename withdraws a device.
     */
    public Scanner withNamesAsAttributes() {
        return new Scanner(base, sources, rules, true);
    }

    /**
     * A scanner without pci.ids names and without a vGPU type resolver.
     *
     * @param hostRoot the directory that stands for the host's {@code /}
     * @param sources  the sources to run, in this order
     * @return the scanner
     */
    public static Scanner of(Path hostRoot, List<DeviceSource> sources) {
        return new Scanner(hostRoot, PciIds.empty(), VgpuTypeResolver.none(), sources);
    }

    /**
     * The sources this scanner runs, in order.
     *
     * @return an immutable list
     */
    public List<DeviceSource> sources() {
        return sources;
    }

    /**
     * One scan of every source.
     *
     * @param previous the last snapshot; it supplies the devices of a source that fails in this scan
     *                 ({@link Snapshot#empty()} for the first scan)
     * @return the next snapshot
     */
    public Snapshot scan(Snapshot previous) {
        return run(previous).snapshot();
    }

    private void failed(String source, String reason, int kept) {
        Failing before = failing.get(source);
        failing.put(source, new Failing(reason, before == null ? 1 : before.scans() + 1));
        if (before == null || !before.reason().equals(reason)) {
            LOG.warn("source {} is failing: {}; its {} devices from the last good scan stay advertised, and every scan"
                    + " tries it again", source, reason, kept);
        } else {
            LOG.debug("source {} still failing ({} scans in a row): {}", source, before.scans() + 1, reason);
        }
    }

    private void recovered(String source) {
        Failing before = failing.remove(source);
        if (before != null) {
            LOG.info("source {} answers again after {} failed {}", source, before.scans(),
                    before.scans() == 1 ? "scan" : "scans in a row");
        }
    }

    /**
     * Why something failed, in words for an operator: a file error says which file and what is wrong with it; no
     * exception class names, except for the unexpected (a bug, which its class helps to find).
     *
     * @param e what a source threw
     * @return the reason, never empty
     */
    public static String inWords(Throwable e) {
        String message = e.getMessage() == null || e.getMessage().isBlank() ? null : e.getMessage();
        if (e instanceof FileSystemException fs && fs.getReason() == null && fs.getFile() != null) {
            String file = fs.getFile() + (fs.getOtherFile() == null ? "" : " -> " + fs.getOtherFile());
            if (e instanceof NoSuchFileException) {
                return file + " is missing";
            }
            if (e instanceof AccessDeniedException) {
                return file + ": permission denied";
            }
            return file + ": cannot be read";
        }
        if (e instanceof IOException) {
            return message == null ? "an I/O error without a message" : message;
        }
        return "an unexpected error (" + e.getClass().getSimpleName() + (message == null ? "" : ": " + message) + ")";
    }

    /**
     * What one scan produced, and which sources failed in it.
     *
     * @param snapshot the next snapshot
     * @param failures source name → why it failed (its previous devices were kept), in source order
     */
    public record Result(Snapshot snapshot, Map<String, String> failures) {
        /** Copies the map, keeping its order. */
        public Result {
            Objects.requireNonNull(snapshot, "snapshot");
            failures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(failures));
        }
    }

    /**
     * One scan of every source, with the sources that failed.
     *
     * @param previous the last snapshot; it supplies the devices of a source that fails in this scan
     * @return the next snapshot and the failures
     */
    public Result run(Snapshot previous) {
        Map<String, String> failures = new LinkedHashMap<>();
        // One host per scan, shared by every source of it: a fresh scan scope, so sources read the files they have
        // in common once (never an answer from an earlier scan), and a fresh memoizing view of the resolver, so
        // each physical GPU is asked at most once per scan.
        // The scope is sized from the last scan's key count (capped: a hint, not something a hostile host inflates).
        DeviceRules rulesNow = Objects.requireNonNull(rules.get(), "device rules");
        Snapshot.Builder next = Snapshot.builder();
        try (ScanRound scope = base.files().openRound(expectedScopeKeys)) {
            Host host = base.withVgpuTypes(VgpuTypeResolver.memoizing(base.vgpuTypes())).withScanScope(scope);
            scanSources(host, rulesNow, previous, next, failures);
            expectedScopeKeys = Math.min(scope.keys() + scope.keys() / 8 + 16, MAX_EXPECTED_SCOPE_KEYS);
        }
        return new Result(next.build(), failures);
    }

    /** Every source in order, on the scan's host: each one's devices, or its previous ones and why it failed. */
    private void scanSources(Host host, DeviceRules rulesNow, Snapshot previous, Snapshot.Builder next,
                             Map<String, String> failures) {
        for (DeviceSource source : sources) {
            Discovery discovery = null;
            Discovery found = null;
            String failure = null;
            try {
                found = source.discover(host);
                discovery = rulesNow.apply(found, device -> PciDeviceIds.of(host, device));
                LOG.debug("source {} found {} devices, skipped {}", source.name(), discovery.devices().size(),
                        discovery.skipped().size());
            } catch (Exception | LinkageError e) {
                failure = inWords(e);
                LOG.debug("source {} failed", source.name(), e);
            }
            if (failure == null) {
                try {
                    if (namesAsAttributes) {
                        sayKept(source.name(), next.addKeepingUnrenamed(source.name(), discovery, byId(found)),
                                discovery);
                    } else {
                        next.add(source.name(), discovery);
                    }
                } catch (IllegalArgumentException e) {
                    failure = "it returned inconsistent devices: " + e.getMessage();
                }
            }
            if (failure == null) {
                recovered(source.name());
            } else {
                Discovery kept = previous.discoveryOf(source.name());
                next.add(source.name(), kept);
                failures.put(source.name(), failure);
                failed(source.name(), failure, kept.devices().size());
            }
        }
    }

    /** A discovery's devices by id. */
    private static Map<String, Device> byId(Discovery discovery) {
        Map<String, Device> out = new java.util.HashMap<>();
        discovery.devices().forEach(d -> out.put(d.id(), d));
        return out;
    }

    /** One WARN per device that starts to be kept under its own name; a device renamed as asked again is forgotten. */
    private void sayKept(String source, List<Device> kept, Discovery renamed) {
        Map<String, Device> wanted = byId(renamed);
        for (Device device : kept) {
            if (keptUnrenamed.add(device.id())) {
                LOG.warn("Device {} of source {} stays {}: the configuration renames it to {}, which another source"
                        + " produces or which holds devices attached otherwise; in DRA mode each device is published"
                        + " on its own, so it keeps its source's name (its resourceName attribute) rather than"
                        + " leave the pool", device.id(), source, device.resource(),
                        wanted.get(device.id()).resource());
            }
        }
        Set<String> keptNow = new java.util.HashSet<>();
        kept.forEach(d -> keptNow.add(d.id()));
        renamed.devices().stream().map(Device::id).filter(id -> !keptNow.contains(id)).forEach(keptUnrenamed::remove);
    }
}
