package dev.vgpu.daemon.scan;

import dev.vgpu.core.PciIds;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
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
 * The databases and libraries every command that scans uses: pci.ids and NVML. Files named explicitly must be there:
 * a missing pci.ids would silently change resource names, a missing NVML library would silently drop vGPU names and
 * health.
 *
 * @param pciIds      {@code --pci-ids}, or null for the system's or the bundled names
 * @param nvmlLibrary {@code --nvml-library}, or null for the dynamic linker's {@code libnvidia-ml.so.1}
 * @param noNvml      {@code --no-nvml}
 */
public record HostOptions(Path pciIds, Path nvmlLibrary, boolean noNvml) {

    /** Where the program looks for pci.ids when {@code --pci-ids} is not given (its own file system). */
    public static final List<Path> DEFAULT_PCI_IDS = List.of(Path.of("/usr/share/misc/pci.ids"),
            Path.of("/usr/share/hwdata/pci.ids"), Path.of("/usr/pci.ids"));

    public static final CliOption PCI_IDS = CliOption.value("--pci-ids", "FILE", "The pci.ids database; must exist (an empty"
            + " file means numeric names). Default: the first readable of /usr/share/misc/pci.ids,"
            + " /usr/share/hwdata/pci.ids, /usr/pci.ids, else the pinned NVIDIA section bundled in the jar (see"
            + " --version).");
    public static final CliOption NVML_LIBRARY = CliOption.value("--nvml-library", "FILE", "Load NVML from this file (it must"
            + " exist) instead of libnvidia-ml.so.1 through the dynamic linker.");
    public static final CliOption NO_NVML = CliOption.flag("--no-nvml", "Do not use NVML (no vGPU type-name fallback, no XID"
            + " health events).");
    /** The rows of every command that scans. */
    public static final List<CliOption> OPTIONS = List.of(PCI_IDS, NVML_LIBRARY, NO_NVML);
    /** Nothing named: the system pci.ids, NVML through the dynamic linker. */
    public static final HostOptions DEFAULTS = new HostOptions(null, null, false);

    /** The options as the command line gives them. */
    public static HostOptions of(CliArgs args) {
        return new HostOptions(args.path(PCI_IDS), args.path(NVML_LIBRARY), args.flag(NO_NVML));
    }

    /**
     * Refuses an explicitly named file that is missing or unreadable.
     *
     * @throws Refusal naming the option
     */
    public void requireNamedFiles() {
        if (pciIds != null) {
            requireReadableFile("--pci-ids", pciIds, "passthrough resource names come from it");
        }
        if (nvmlLibrary != null) {
            requireReadableFile("--nvml-library", nvmlLibrary, "vGPU type names and XID health come from it");
        }
    }

    public static void requireReadableFile(String option, Path file, String why) {
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
    public RecoveringNvml openNvmlBesideTheFirstScan() {
        return noNvml ? RecoveringNvml.disabled("disabled by --no-nvml")
                : RecoveringNvml.openInBackground(Optional.ofNullable(nvmlLibrary), task -> {
                    Thread opener = new Thread(task, "vgpu-nvml-open");
                    opener.setDaemon(true);
                    opener.start();
                });
    }

    /** The pci.ids names: the named file, else the system default or the bundled section. */
    public PciIdsDatabase loadPciIds() {
        return loadPciIds(() -> PciIdsDatabase.firstOrBundled(DEFAULT_PCI_IDS));
    }

    /** The pci.ids names: the named file, else the fallback. */
    public PciIdsDatabase loadPciIds(Supplier<PciIdsDatabase> fallback) {
        return pciIds != null ? PciIdsDatabase.file(pciIds) : fallback.get();
    }
}
