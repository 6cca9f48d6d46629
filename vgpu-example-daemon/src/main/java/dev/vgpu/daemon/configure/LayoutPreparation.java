package dev.vgpu.daemon.configure;

import dev.vgpu.configurator.ApplyReport;
import dev.vgpu.configurator.CardOutcome;
import dev.vgpu.configurator.CardTypes;
import dev.vgpu.configurator.InUse;
import dev.vgpu.configurator.KnownTypeNames;
import dev.vgpu.configurator.file.InvalidVgpuConfigException;
import dev.vgpu.configurator.file.VgpuLayout;
import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.daemon.agent.NodeAgent;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code serve --vgpu-config FILE --select NAME}: the layout applied to the host before the first scan and again after
 * every {@code SIGHUP} (the file read again each time), so that a rebooted node holds its vGPUs again before anything
 * is advertised. A refused card is a WARN naming why (the VFs in use) and serving goes on with the host as it is; a
 * file that cannot be used is a WARN and nothing is written.
 *
 * <p>The names every run read are published to the scanner ({@link #typeNames}), ahead of NVML: a card this filled
 * lists no types, and its VFs still carry their profiles. Metrics: {@code vgpu_config_apply_total{result}} counts the
 * cards of every run by outcome ({@code invalid} and {@code unreadable}: a run that could not plan: the file, or the
 * host or its checkpoints), {@code vgpu_config_vfs{profile}} the VFs holding each profile after the last run.
 *
 * <p>Threads: {@link #prepare} runs on the agent's thread only, which owns {@link #names}; the scanner (same thread)
 * and the metrics scrape read the published, immutable values.
 */
public final class LayoutPreparation implements NodeAgent.HostPreparation {

    private static final Logger LOG = LoggerFactory.getLogger(LayoutPreparation.class);

    private final LayoutOptions.Selected selected;
    private final LayoutHost host;
    private final InUseSources sources;
    private final Optional<Path> stateDir;
    private final Counter applies = Counter.builder().name("vgpu_config_apply_total")
            .help("Cards the vGPU layout was applied to, by result: applied, unchanged, refused, rolled_back,"
                    + " rollback_failed; invalid or unreadable: a run that could not plan (the file; the host or a"
                    + " checkpoint)").labelNames("result").build();
    /** Agent thread only: every card's names as the latest run that read the card saw them. */
    private final Map<PciAddress, CardTypes> names = new HashMap<>();
    /** The names published to the scanner and to the next run. */
    private volatile VgpuTypeResolver published = VgpuTypeResolver.none();
    /** NVML's names, once the agent gave them. */
    private volatile VgpuTypeResolver nvml = VgpuTypeResolver.none();
    /** Agent thread only: the layout read at start, used by the first run (later runs read the file again). */
    private VgpuLayout readAtStart;
    /** VFs per profile after the last run. */
    private volatile Map<String, Integer> vgpus = Map.of();

    private LayoutPreparation(LayoutOptions.Selected selected, VgpuLayout readAtStart, LayoutHost host,
                              InUseSources sources, Optional<Path> stateDir) {
        this.selected = selected;
        this.readAtStart = readAtStart;
        this.host = host;
        this.sources = sources;
        this.stateDir = stateDir;
        for (String result : List.of("applied", "unchanged", "refused", "rolled_back", "rollback_failed", "invalid",
                "unreadable")) {
            applies.labelValues(result);
        }
    }

    /**
     * The preparation {@code serve}'s options ask for: none without a layout; the file read now, so that a mistake in
     * it stops the start (exit 2) rather than a WARN at every reload.
     *
     * @param devicePluginDir the kubelet's device-plugin directory (its checkpoint)
     * @param stateDir        the daemon's state directory (the DRA checkpoint, learned names)
     * @throws dev.vgpu.daemon.cli.Refusal for a file or layout that cannot be used, or a simulated host without
     *                                     its state file
     */
    public static NodeAgent.HostPreparation of(Optional<LayoutOptions.Selected> selected, Path hostRoot,
                                               boolean simulated, Path devicePluginDir, Optional<Path> stateDir) {
        if (selected.isEmpty()) {
            return NodeAgent.HostPreparation.NONE;
        }
        VgpuLayout layout = LayoutOptions.loadOrRefuse(selected.get());
        return new LayoutPreparation(selected.get(), layout, LayoutHost.of(hostRoot, simulated),
                new InUseSources(devicePluginDir, stateDir), stateDir);
    }

    @Override
    public VgpuTypeResolver typeNames(VgpuTypeResolver nvmlNames) {
        nvml = nvmlNames;
        return pf -> KnownTypeNames.union(published, nvmlNames).supportedTypes(pf);
    }

    @Override
    public void register(PrometheusRegistry registry) {
        registry.register(applies);
        GaugeWithCallback.builder().name("vgpu_config_vfs")
                .help("VFs holding each vGPU profile on the cards of the layout, after its last run")
                .labelNames("profile").callback(cb -> vgpus.forEach((profile, n) -> cb.call(n, profile)))
                .register(registry);
    }

    @Override
    public void prepare() {
        VgpuLayout layout = readAtStart;
        readAtStart = null;
        try {
            if (layout == null) {
                layout = selected.load();
            }
        } catch (InvalidVgpuConfigException e) {
            applies.labelValues("invalid").inc();
            LOG.warn("vGPU layout not applied, the host stays as it is: {}", selected.problem(e));
            return;
        }
        InUse inUse = sources.inUse();
        VgpuTypeResolver known = KnownTypeNames.union(published, nvml, LayoutRun.learnedNames(host.root(), stateDir));
        SysfsVgpuHost reader = host.reader(known);
        LayoutRun.Selection selection;
        try {
            selection = LayoutRun.select(layout, reader, inUse);
        } catch (InvalidVgpuConfigException e) {
            applies.labelValues("invalid").inc();
            LOG.warn("vGPU layout not applied, the host stays as it is: {}", selected.problem(e));
            return;
        } catch (IOException e) {
            applies.labelValues("unreadable").inc();
            LOG.warn("vGPU layout not applied, the host stays as it is: {}", e.getMessage());
            return;
        }
        selection.demands().unmatched().forEach(line -> LOG.info("vGPU layout: {}", line));
        LOG.info("vGPU layout: applying {} to {} cards of {}; VFs in use from {}", selected.describe(),
                selection.demands().cards().size(), host.describe(), sources.describe());
        ApplyReport report = LayoutRun.apply(selection, reader, host, inUse);
        for (CardOutcome outcome : report.cards()) {
            applies.labelValues(outcome.result()).inc();
            if (!outcome.matches()) {
                LOG.warn("vGPU layout: {}; serving goes on with the card as it is",
                        LayoutRun.describe(selection.demands(), outcome));
            }
        }
        names.putAll(report.types());
        published = KnownTypeNames.of(Map.copyOf(names));
        vgpus = report.vgpusByProfile();
        LOG.info("vGPU layout: {} ({} writes): {}", report.hostMatches() ? "the host holds it"
                : "the host does not hold it", report.writes(), report.results());
    }
}
