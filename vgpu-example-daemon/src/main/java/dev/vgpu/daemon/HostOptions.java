package dev.vgpu.daemon;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.nvml.RecoveringNvml;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The databases and libraries every command that scans uses: pci.ids and NVML; and, once resolved by
 * {@link ScanOptions}, the device sources. Files named explicitly must be there: a missing pci.ids would silently
 * change resource names, a missing NVML library would silently drop vGPU names and health.
 */
final class HostOptions {

    /** Where the program looks for pci.ids when {@code --pci-ids} is not given (its own file system). */
    static final List<Path> DEFAULT_PCI_IDS = List.of(Path.of("/usr/share/misc/pci.ids"),
            Path.of("/usr/share/hwdata/pci.ids"), Path.of("/usr/pci.ids"));

    static final CliOption PCI_IDS = CliOption.value("--pci-ids", "FILE", "The pci.ids database; must exist (an empty"
            + " file means numeric names). Default: the first readable of /usr/share/misc/pci.ids,"
            + " /usr/share/hwdata/pci.ids, /usr/pci.ids, else the pinned NVIDIA section bundled in the jar (see"
            + " --version).");
    static final CliOption NVML_LIBRARY = CliOption.value("--nvml-library", "FILE", "Load NVML from this file (it must"
            + " exist) instead of libnvidia-ml.so.1 through the dynamic linker.");
    static final CliOption NO_NVML = CliOption.flag("--no-nvml", "Do not use NVML (no vGPU type-name fallback, no XID"
            + " health events).");
    /** The rows of every command that scans. */
    static final List<CliOption> OPTIONS = List.of(PCI_IDS, NVML_LIBRARY, NO_NVML);

    Path pciIds;
    Path nvmlLibrary;
    boolean noNvml;

    /** Nothing named: the system pci.ids, NVML through the dynamic linker (tests set the fields). */
    HostOptions() {
    }

    HostOptions(CliArgs args) {
        pciIds = args.path(PCI_IDS);
        nvmlLibrary = args.path(NVML_LIBRARY);
        noNvml = args.flag(NO_NVML);
    }

    /** Sources chosen by {@code --sources}; null = every source on the class path. */
    private List<DeviceSource> sources;
    private PciIdsDatabase pciIdsInUse;

    /**
     * Refuses an explicitly named file that is missing or unreadable.
     *
     * @throws Refusal naming the option
     */
    void requireNamedFiles() {
        if (pciIds != null) {
            requireReadableFile("--pci-ids", pciIds, "passthrough resource names come from it");
        }
        if (nvmlLibrary != null) {
            requireReadableFile("--nvml-library", nvmlLibrary, "vGPU type names and XID health come from it");
        }
    }

    static void requireReadableFile(String option, Path file, String why) {
        String problem;
        if (Files.isDirectory(file)) {
            problem = "is a directory";
        } else {
            try {
                Files.newInputStream(file).close();
                return;
            } catch (NoSuchFileException e) {
                problem = "does not exist";
            } catch (AccessDeniedException e) {
                problem = "is not readable (Permission denied)";
            } catch (IOException e) {
                problem = "cannot be read (" + e.getMessage() + ")";
            }
        }
        throw new Refusal(option + " " + file + " " + problem + "; " + why
                + ", so the daemon does not start without it");
    }

    /**
     * NVML as these options ask: off with {@code --no-nvml} (never retried), else the named file or the default
     * library, its first attempt on a thread of its own ({@code vgpu-nvml-open}, which ends with it) and again by the
     * caller while it is down. So the first scan ({@code serve}'s, {@code discover}'s) and registration need not wait
     * for it: only a vGPU type name that only NVML knows waits (docs/ARCHITECTURE.md, "Threads and mutable state").
     */
    RecoveringNvml openNvmlBesideTheFirstScan() {
        return noNvml ? RecoveringNvml.disabled("disabled by --no-nvml")
                : RecoveringNvml.openInBackground(Optional.ofNullable(nvmlLibrary), task -> {
                    Thread opener = new Thread(task, "vgpu-nvml-open");
                    opener.setDaemon(true);
                    opener.start();
                });
    }

    /** The pci.ids names: the named file, else the system default or the bundled section. */
    PciIds loadPciIds() {
        return loadPciIds(() -> PciIdsDatabase.firstOrBundled(DEFAULT_PCI_IDS));
    }

    /** The pci.ids names: the named file, else the fallback; remembered for {@link #describePciIds()}. */
    PciIds loadPciIds(Supplier<PciIdsDatabase> fallback) {
        pciIdsInUse = pciIds != null ? PciIdsDatabase.file(pciIds) : fallback.get();
        return pciIdsInUse.names();
    }

    /** Where the names of the last {@link #loadPciIds()} came from, with the database version (for logs). */
    String describePciIds() {
        return pciIdsInUse == null ? "not loaded" : pciIdsInUse.toString();
    }

    /** Where the names of the last {@link #loadPciIds()} came from and its version, without the count of names. */
    String pciIdsSource() {
        return pciIdsInUse == null ? "not loaded" : pciIdsInUse.description();
    }

    void useSources(List<DeviceSource> chosen) {
        sources = List.copyOf(chosen);
    }

    /** The sources to scan with: those {@code --sources} chose, else every source on the class path. */
    List<DeviceSource> sources() {
        return sources != null ? sources : DeviceSources.load();
    }
}
