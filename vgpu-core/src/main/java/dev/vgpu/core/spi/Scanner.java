package dev.vgpu.core.spi;

import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * Each scan gets a fresh {@link Host}: a new {@link ScanScope} shared by every source of that scan, and a
 * memoizing view of the vGPU type resolver, so each physical GPU is asked at most once per scan.
 *
 * <p>Stateless apart from its configuration; {@link #scan} may be called from any thread, and callers that feed a
 * {@link dev.vgpu.core.RescanLoop} let its thread make every scan after the first.
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
        this(new Host(hostRoot, pciIds, vgpuTypes), sources);
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
        this.base = Objects.requireNonNull(host, "host").withScanScope(ScanScope.none());
        this.sources = List.copyOf(sources);
        this.rules = Objects.requireNonNull(rules, "rules");
        if (this.sources.isEmpty()) {
            LOG.warn("NO DEVICE SOURCES: nothing will ever be discovered. Put vgpu-sysfs (the built-in sources) or a "
                    + "jar that provides dev.vgpu.core.spi.DeviceSource on the class path or module path.");
        }
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
        ConcurrentScanScope scope = new ConcurrentScanScope(expectedScopeKeys);
        Host host = base.withVgpuTypes(VgpuTypeResolver.memoizing(base.vgpuTypes())).withScanScope(scope);
        DeviceRules rulesNow = Objects.requireNonNull(rules.get(), "device rules");
        Snapshot.Builder next = Snapshot.builder();
        for (DeviceSource source : sources) {
            Discovery discovery;
            try {
                discovery = rulesNow.apply(source.discover(host), device -> PciDeviceIds.of(host, device));
                LOG.debug("source {} found {} devices, skipped {}", source.name(), discovery.devices().size(),
                        discovery.skipped().size());
            } catch (Exception | LinkageError e) {
                failures.put(source.name(), e.toString());
                discovery = previous.discoveryOf(source.name());
                LOG.error("source {} failed, keeping its {} previously discovered devices for this round: {}",
                        source.name(), discovery.devices().size(), e.toString());
            }
            try {
                next.add(source.name(), discovery);
            } catch (IllegalArgumentException e) {
                failures.put(source.name(), e.getMessage());
                LOG.error("source {} returned inconsistent devices, keeping its previous ones: {}", source.name(),
                        e.getMessage());
                next.add(source.name(), previous.discoveryOf(source.name()));
            }
        }
        expectedScopeKeys = Math.min(scope.size() + scope.size() / 8 + 16, MAX_EXPECTED_SCOPE_KEYS);
        return new Result(next.build(), failures);
    }
}
