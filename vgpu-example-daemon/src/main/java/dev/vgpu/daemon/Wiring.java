package dev.vgpu.daemon;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.nvml.RecoveringNvml;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One-shot wiring for {@code discover}: sources from the class path, NVML when it loads, one scan. */
final class Wiring {

    private static final Logger LOG = LoggerFactory.getLogger(Wiring.class);

    private Wiring() {
    }

    /**
     * Scans a host once, without a state directory.
     *
     * @throws IllegalArgumentException when the host root is not a directory
     */
    static Scanner.Result scanOnce(HostOptions options, Path hostRoot, PciIds pciIds) {
        return scanOnce(options, hostRoot, pciIds, Optional.empty(), LiveConfig.none());
    }

    /**
     * Scans a host once (the snapshot, and the sources that failed with why in words); a state directory is only read ({@link StateDirectory#forReading}), so that this shows what
     * a restarted daemon would advertise without changing what the daemon keeps there.
     *
     * The configuration's rules and type names apply as in {@code serve}.
     *
     * @throws IllegalArgumentException when the host root is not a directory
     */
    static Scanner.Result scanOnce(HostOptions options, Path hostRoot, PciIds pciIds, Optional<Path> stateDir,
                             LiveConfig config) {
        if (!Files.isDirectory(hostRoot)) {
            throw new IllegalArgumentException("host root " + hostRoot + " is not a directory");
        }
        List<DeviceSource> sources = options.sources();
        // NVML loads beside the scan, which waits for it only to name a type only NVML knows (as serve's first scan);
        // the scan's answer is complete once the attempt has ended, whose outcome is then logged too.
        try (RecoveringNvml nvml = options.openNvmlBesideTheFirstScan()) {
            LOG.info("discover: host root {}, sources {}, {}, pci.ids {}, state dir {}, configuration {}", hostRoot,
                    sources.stream().map(DeviceSource::name).toList(), nvml.description(), options.describePciIds(),
                    stateDir.map(dir -> dir + " (read only)").orElse("off"), config.describe());
            Host bare = Host.of(hostRoot);
            Host host = bare.withPciIds(pciIds).withVgpuTypes(config.resolverAfter(nvml.vgpuTypeResolver(), bare));
            Scanner.Result result = new Scanner(stateDir.map(dir -> host.withStateDirectory(
                    StateDirectory.forReading(dir))).orElse(host), sources, config::rules).run(Snapshot.empty());
            nvml.awaitFirstAttempt();
            return result;
        }
    }
}
