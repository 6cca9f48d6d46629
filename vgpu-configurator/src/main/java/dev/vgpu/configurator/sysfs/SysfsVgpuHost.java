package dev.vgpu.configurator.sysfs;

import dev.vgpu.configurator.CardFacts;
import dev.vgpu.configurator.HostFacts;
import dev.vgpu.configurator.HostReader;
import dev.vgpu.configurator.HostWrites;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The configurator's reads and writes on a host's sysfs under a root directory ({@code /} on a host, a
 * {@code SysfsTree} in a test), with plain {@code java.nio} calls.
 *
 * <p>A card is a PCI function under {@code sys/bus/pci/devices} with vendor {@code 0x10de}, bound to the
 * {@code nvidia} driver, with {@code sriov_totalvfs} (docs/HOST-FACTS.md §1c). Its VFs are the functions its
 * {@code virtfnN} links name; each VF's {@code nvidia/current_vgpu_type} is its type ({@code 0}: none) and its
 * {@code nvidia/creatable_vgpu_types} what it could be given now. Type names come from every catalog of the card
 * (PF and VFs; an id two of them name differently is ambiguous), then from the resolver given here (NVML, or names
 * known from elsewhere, {@link dev.vgpu.configurator.KnownTypeNames}); a card's names are never another card's.
 *
 * <p>Writes go to {@code sriov_numvfs} of the PF and {@code nvidia/current_vgpu_type} of a VF, as {@code echo N >}
 * does; a file is never created. Stateless and safe for concurrent use (each call reads the files anew).
 * <pre>{@code
 * SysfsVgpuHost host = SysfsVgpuHost.at(Path.of("/"), nvmlResolver);
 * HostFacts facts = host.read(inUse);
 * }</pre>
 */
public final class SysfsVgpuHost implements HostReader, HostWrites {

    /** Where PCI functions are listed, under the root. */
    static final String PCI_DEVICES = "sys/bus/pci/devices";

    private final Path root;
    private final VgpuTypeResolver names;

    private SysfsVgpuHost(Path root, VgpuTypeResolver names) {
        this.root = Objects.requireNonNull(root, "root");
        this.names = Objects.requireNonNull(names, "names");
    }

    /** The host under {@code root}, naming types from the cards' catalogs only. */
    public static SysfsVgpuHost at(Path root) {
        return at(root, VgpuTypeResolver.none());
    }

    /** The host under {@code root}, naming what the catalogs do not from {@code names}. */
    public static SysfsVgpuHost at(Path root, VgpuTypeResolver names) {
        return new SysfsVgpuHost(root, names);
    }

    /** The host root. */
    public Path root() {
        return root;
    }

    @Override
    public HostFacts read(Set<PciAddress> inUse) throws IOException {
        Set<PciAddress> used = Set.copyOf(inUse);
        List<CardFacts> cards = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(bus())) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (PciAddress.isValid(name) && isCard(entry)) {
                    PciAddress pf = PciAddress.parse(name);
                    cards.add(new CardReading(pf, bus(), used).read(names));
                }
            }
        }
        return new HostFacts(cards);
    }

    @Override
    public CardFacts readCard(PciAddress pf, Set<PciAddress> inUse) throws IOException {
        Path dir = bus().resolve(pf.toString());
        if (!HostFiles.exists(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "the host has no PCI function " + pf);
        }
        if (!isCard(dir)) {
            throw new NoSuchFileException(dir.toString(), null, pf + " is not an NVIDIA SR-IOV physical function"
                    + " on the nvidia driver");
        }
        return new CardReading(pf, bus(), Set.copyOf(inUse)).read(names);
    }

    @Override
    public void writeVfCount(PciAddress pf, int count) throws IOException {
        if (count < 0) {
            throw new IllegalArgumentException("a VF count is 0 or more, got " + count);
        }
        HostFiles.writeNumber(bus().resolve(pf.toString()).resolve("sriov_numvfs"), count);
    }

    @Override
    public void writeType(PciAddress vf, long typeId) throws IOException {
        if (typeId < 0) {
            throw new IllegalArgumentException("a vGPU type id is 0 or more, got " + typeId);
        }
        HostFiles.writeNumber(bus().resolve(vf.toString()).resolve(CardReading.CURRENT_TYPE), typeId);
    }

    private Path bus() {
        return root.resolve(PCI_DEVICES);
    }

    /** NVIDIA, bound to {@code nvidia}, SR-IOV capable. Unreadable vendor or driver: not a card. */
    private static boolean isCard(Path dir) {
        try {
            return HostFiles.exists(dir.resolve("sriov_totalvfs"))
                    && HostFiles.hexId(dir.resolve("vendor")) == CardFacts.NVIDIA_VENDOR
                    && "nvidia".equals(HostFiles.linkName(dir.resolve("driver")));
        } catch (IOException e) {
            return false;
        }
    }
}
