package dev.vgpu.daemon;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.nvml.RecoveringNvml;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One-shot wiring for {@code discover}: sources from the class path, NVML when it loads, one scan. */
final class Wiring {

    private static final Logger LOG = LoggerFactory.getLogger(Wiring.class);

    private Wiring() {
    }

    /**
     * Scans a host once.
     *
     * @throws IllegalArgumentException when the host root is not a directory
     */
    static Snapshot scanOnce(HostOptions options, Path hostRoot, PciIds pciIds) {
        if (!Files.isDirectory(hostRoot)) {
            throw new IllegalArgumentException("host root " + hostRoot + " is not a directory");
        }
        List<DeviceSource> sources = options.sources();
        try (RecoveringNvml nvml = options.openNvml()) {
            LOG.info("discover: host root {}, sources {}, {}, pci.ids {}", hostRoot,
                    sources.stream().map(DeviceSource::name).toList(), nvml.description(), options.describePciIds());
            return new Scanner(hostRoot, pciIds, nvml.vgpuTypeResolver(), sources).scan(Snapshot.empty());
        }
    }
}
