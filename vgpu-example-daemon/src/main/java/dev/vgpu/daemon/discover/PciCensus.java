package dev.vgpu.daemon.discover;

import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What {@code discover} saw on the PCI bus, counted apart from the sources so that its summary says what a host has
 * even when nothing is advertised ("6 PCI functions, 0 NVIDIA"): the entries of {@code sys/bus/pci/devices} and those
 * whose {@code vendor} is {@code 0x10de}.
 *
 * @param functions the PCI functions listed, or -1 when {@code sys/bus/pci/devices} cannot be listed
 * @param nvidia    those with NVIDIA's vendor id
 */
record PciCensus(int functions, int nvidia) {

    /** Counts under a host root; never throws (an unlistable bus is {@code functions == -1}). */
    static PciCensus of(Path hostRoot, HostFiles files) {
        Path bus = hostRoot.resolve("sys/bus/pci/devices");
        int functions = 0;
        int nvidia = 0;
        ScanScope scope = ScanScope.fresh(); // one read buffer for the whole count
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(bus)) {
            for (Path entry : entries) {
                functions++;
                try {
                    if ("0x10de".equals(files.readStripped(entry.resolve("vendor"), scope))) {
                        nvidia++;
                    }
                } catch (IOException e) {
                    // A function without a readable vendor is counted, not judged: the sources say why.
                }
            }
        } catch (IOException | RuntimeException e) {
            return new PciCensus(-1, 0);
        }
        return new PciCensus(functions, nvidia);
    }

    /** The summary line: {@code 6 PCI functions, 1 NVIDIA, 0 advertised, 1 skipped}. */
    String summary(int advertised, int skipped) {
        String seen = functions < 0 ? "no PCI functions listed (sys/bus/pci/devices cannot be read)"
                : functions + (functions == 1 ? " PCI function, " : " PCI functions, ") + nvidia + " NVIDIA";
        return seen + ", " + advertised + " advertised, " + skipped + " skipped";
    }
}
