package dev.vgpu.daemon;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs every source once and builds the next snapshot. Fail safe: a source that throws keeps the devices it
 * contributed to the previous snapshot for this round.
 *
 * <p>Stateless apart from its configuration; callers serialize scans (the rescan thread, or main at start).
 */
final class Scanner {

    private static final Logger LOG = LoggerFactory.getLogger(Scanner.class);

    private final Path hostRoot;
    private final PciIds pciIds;
    private final VgpuTypeResolver vgpuTypes;
    private final List<DeviceSource> sources;

    Scanner(Path hostRoot, PciIds pciIds, VgpuTypeResolver vgpuTypes, List<DeviceSource> sources) {
        this.hostRoot = hostRoot;
        this.pciIds = pciIds;
        this.vgpuTypes = vgpuTypes;
        this.sources = List.copyOf(sources);
    }

    List<DeviceSource> sources() {
        return sources;
    }

    /** One scan of every source; {@code previous} supplies the devices of a source that fails. */
    Snapshot scan(Snapshot previous) {
        // One host per scan, shared by every source of it: a fresh scan scope, so sources read the files they have
        // in common once (never an answer from an earlier scan), and a fresh memoizing view of the resolver, so
        // each physical GPU is asked at most once per scan.
        Host host = Host.of(hostRoot).withPciIds(pciIds).withVgpuTypes(VgpuTypeResolver.memoizing(vgpuTypes))
                .forScan();
        Snapshot.Builder next = Snapshot.builder();
        for (DeviceSource source : sources) {
            Discovery discovery;
            try {
                discovery = source.discover(host);
                LOG.debug("source {} found {} devices, skipped {}", source.name(), discovery.devices().size(),
                        discovery.skipped().size());
            } catch (Exception | LinkageError e) {
                discovery = previous.discoveryOf(source.name());
                LOG.error("source {} failed, keeping its {} previously discovered devices for this round: {}",
                        source.name(), discovery.devices().size(), e.toString());
            }
            try {
                next.add(source.name(), discovery);
            } catch (IllegalArgumentException e) {
                LOG.error("source {} returned inconsistent devices, keeping its previous ones: {}", source.name(),
                        e.getMessage());
                next.add(source.name(), previous.discoveryOf(source.name()));
            }
        }
        return next.build();
    }
}
