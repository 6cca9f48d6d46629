package dev.vgpu.daemon;

import dev.vgpu.core.PciIds;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Option;

/** Options shared by every command that scans a host. */
final class HostOptions {

    /** Where the program looks for pci.ids when {@code --pci-ids} is not given (its own file system). */
    static final List<Path> DEFAULT_PCI_IDS = List.of(Path.of("/usr/share/misc/pci.ids"),
            Path.of("/usr/share/hwdata/pci.ids"), Path.of("/usr/pci.ids"));

    @Option(names = "--host-root", paramLabel = "DIR", defaultValue = "/",
            description = "Directory standing for the host's /: every sysfs and /dev path is read under it (default: ${DEFAULT-VALUE}).")
    Path hostRoot;

    @Option(names = "--pci-ids", paramLabel = "FILE",
            description = "The pci.ids database (default: the first readable of /usr/share/misc/pci.ids, /usr/share/hwdata/pci.ids, /usr/pci.ids; none = numeric names).")
    Path pciIds;

    @Option(names = "--nvml-library", paramLabel = "FILE",
            description = "Load NVML from this file instead of libnvidia-ml.so.1 through the dynamic linker.")
    Path nvmlLibrary;

    @Option(names = "--no-nvml", description = "Do not use NVML (no vGPU type-name fallback, no XID health events).")
    boolean noNvml;

    /**
     * NVML as these options ask: off with {@code --no-nvml} (never retried), else the named file or the
     * default library, tried once now and again by the caller while it is down.
     */
    dev.vgpu.nvml.RecoveringNvml openNvml() {
        return noNvml ? dev.vgpu.nvml.RecoveringNvml.disabled("disabled by --no-nvml")
                : dev.vgpu.nvml.RecoveringNvml.open(java.util.Optional.ofNullable(nvmlLibrary));
    }

    /** The pci.ids names: the named file, else the first default that exists. */
    PciIds loadPciIds() {
        if (pciIds != null) {
            PciIds names = PciIds.load(pciIds, Set.of(PciIds.NVIDIA));
            if (names.origin().isEmpty()) {
                org.slf4j.LoggerFactory.getLogger(HostOptions.class)
                        .warn("pci.ids file {} is missing or unreadable: passthrough resources get numeric names", pciIds);
            }
            return names;
        }
        return PciIds.loadFirst(DEFAULT_PCI_IDS, Set.of(PciIds.NVIDIA));
    }
}
