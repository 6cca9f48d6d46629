package dev.vgpu.daemon.discover;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.PciIdsDatabase;
import dev.vgpu.nvml.RecoveringNvml;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code discover}'s one scan: the sources chosen, NVML when it loads, the configuration's rules and names. */
final class OneScan {

    private static final Logger LOG = LoggerFactory.getLogger(OneScan.class);

    private OneScan() {
    }

    /**
     * Scans a host once (the snapshot, and the sources that failed with why in words); a state directory is only read
     * ({@link StateDirectory#forReading}), so that this shows what a restarted daemon would advertise without changing
     * what the daemon keeps there. The configuration's rules and type names apply as in {@code serve}.
     *
     * @param files the reader of the host's files
     * @throws IllegalArgumentException when the host root is not a directory
     */
    static Scanner.Result of(HostOptions options, List<DeviceSource> sources, Path hostRoot,
                             dev.vgpu.hostfiles.HostFiles files, PciIdsDatabase pciIds, Optional<Path> stateDir,
                             LiveConfig config) {
        if (!Files.isDirectory(hostRoot)) {
            throw new IllegalArgumentException("host root " + hostRoot + " is not a directory");
        }
        // NVML loads beside the scan, which waits for it only to name a type only NVML knows (as serve's first scan);
        // the scan's answer is complete once the attempt has ended, whose outcome is then logged too.
        try (RecoveringNvml nvml = options.openNvmlBesideTheFirstScan()) {
            LOG.info("discover: host root {}, host files read {}, sources {}, {}, pci.ids {}, state dir {},"
                    + " configuration {}", hostRoot, files.describe(), sources.stream().map(DeviceSource::name).toList(),
                    nvml.description(), pciIds,
                    stateDir.map(dir -> dir + " (read only)").orElse("off"), config.describe());
            Host bare = Host.of(hostRoot, files).withPciIds(pciIds.names());
            Host host = bare.withVgpuTypes(config.resolverAfter(nvml.vgpuTypeResolver(), bare));
            Scanner.Result result = new Scanner(stateDir.map(dir -> host.withStateDirectory(
                    StateDirectory.forReading(dir))).orElse(host), sources, config::rules).run(Snapshot.empty());
            nvml.awaitFirstAttempt();
            return result;
        }
    }
}
