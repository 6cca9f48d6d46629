package dev.vgpu.configurator.sysfs;

import dev.vgpu.configurator.CardFacts;
import dev.vgpu.configurator.CardTypes;
import dev.vgpu.configurator.VfFacts;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.sysfs.internal.CreatableTypesCatalog;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one card: its PF's ids and VF counts, each VF its {@code virtfnN} links name (type now, catalog now), and
 * the names of its types (every catalog of the card, then the resolver). What cannot be read becomes one of the
 * card's problems, naming the file. Used once, on the reading thread.
 */
final class CardReading {

    private static final Logger LOG = LoggerFactory.getLogger(SysfsVgpuHost.class);
    static final String CATALOG = "nvidia/creatable_vgpu_types";
    static final String CURRENT_TYPE = "nvidia/current_vgpu_type";

    private final PciAddress pf;
    private final Path bus;
    private final Set<PciAddress> inUse;
    private final List<String> problems = new ArrayList<>();
    private final Map<Long, String> names = new TreeMap<>();
    private final Set<Long> ambiguous = new TreeSet<>();
    private boolean anyListed;

    CardReading(PciAddress pf, Path bus, Set<PciAddress> inUse) {
        this.pf = pf;
        this.bus = bus;
        this.inUse = inUse;
    }

    CardFacts read(VgpuTypeResolver resolver) {
        Path dir = bus.resolve(pf.toString());
        int deviceId = 0;
        int totalVfs = 0;
        int numVfs = 0;
        try {
            deviceId = HostFiles.hexId(dir.resolve("device"));
        } catch (IOException e) {
            problems.add("its device id cannot be read: " + ProblemText.describe(e));
        }
        try {
            totalVfs = count(dir.resolve("sriov_totalvfs"));
            numVfs = count(dir.resolve("sriov_numvfs"));
        } catch (IOException e) {
            problems.add("its VF counts cannot be read: " + ProblemText.describe(e));
        }
        catalog(pf, dir);
        List<VfFacts> vfs = vfs(dir);
        if (problems.isEmpty() && vfs.size() != numVfs) {
            problems.add("sriov_numvfs says " + numVfs + " but it links " + vfs.size() + " VFs (virtfnN)");
        }
        boolean configured = vfs.stream().anyMatch(VfFacts::configured);
        CardTypes types = new CardTypes(names, ambiguous, anyListed && !configured && problems.isEmpty());
        VgpuTypeNames answer = VgpuTypeResolver.memoizing(resolver).supportedTypes(pf);
        if (answer instanceof VgpuTypeNames.Answered named) {
            // A resolver's names never make the table complete: it may know only some types (docs/CONFIGURATOR.md).
            types = types.merge(new CardTypes(named.names(), Set.of(), false));
        }
        return new CardFacts(pf, deviceId, totalVfs, numVfs, vfs, types, problems);
    }

    private static int count(Path file) throws IOException {
        long value = HostFiles.number(file);
        if (value > 0xffff) {
            throw new IOException(file.getFileName() + " is too large: " + value);
        }
        return (int) value;
    }

    /** The VFs the PF links as {@code virtfnN}, by N. */
    private List<VfFacts> vfs(Path dir) {
        Map<Integer, PciAddress> links = new TreeMap<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "virtfn*")) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                String number = name.substring("virtfn".length());
                if (number.isEmpty() || number.length() > 4 || !number.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    continue;
                }
                String target = HostFiles.linkName(entry);
                if (!PciAddress.isValid(target)) {
                    problems.add(name + " links to " + ProblemText.quote(target) + ", not a PCI address");
                    continue;
                }
                links.put(Integer.parseInt(number), PciAddress.parse(target));
            }
        } catch (IOException e) {
            problems.add("its VF links cannot be read: " + ProblemText.describe(e));
        }
        List<VfFacts> vfs = new ArrayList<>();
        links.forEach((index, address) -> {
            VfFacts vf = vf(index, address);
            if (vf != null) {
                vfs.add(vf);
            }
        });
        return vfs;
    }

    private VfFacts vf(int index, PciAddress address) {
        Path dir = bus.resolve(address.toString());
        long type;
        try {
            type = HostFiles.number(dir.resolve(CURRENT_TYPE));
        } catch (NoSuchFileException e) {
            problems.add("VF " + address + " has no " + CURRENT_TYPE + ", so it is not a vendor-VFIO vGPU VF ("
                    + ProblemText.describe(e) + ")");
            return null;
        } catch (IOException e) {
            problems.add("VF " + address + ": " + CURRENT_TYPE + " cannot be read: " + ProblemText.describe(e));
            return null;
        }
        Map<Long, String> creatable = catalog(address, dir);
        return new VfFacts(address, index, type, creatable, inUse.contains(address));
    }

    /** One function's catalog (empty when it has none), its names added to the card's. */
    private Map<Long, String> catalog(PciAddress function, Path dir) {
        String text;
        try {
            text = HostFiles.read(dir.resolve(CATALOG));
        } catch (NoSuchFileException e) {
            return Map.of();
        } catch (IOException e) {
            problems.add(function + ": " + CATALOG + " cannot be read: " + ProblemText.describe(e));
            return Map.of();
        }
        CreatableTypesCatalog catalog = CreatableTypesCatalog.parse(text);
        for (String line : catalog.rejected()) {
            LOG.warn("vGPU configurator: {} of {} has a line that is not \"<id> : <name>\", ignoring it: \"{}\"",
                    CATALOG, function, Printable.of(line));
        }
        Map<Long, String> listed = new TreeMap<>();
        for (CreatableTypesCatalog.Entry entry : catalog.entries()) {
            String name = entry.name().strip().replaceAll("\\s+", " ");
            String before = listed.putIfAbsent(entry.typeId(), name);
            if (before != null && !before.equals(name)) {
                ambiguous.add(entry.typeId());
            }
            String known = names.putIfAbsent(entry.typeId(), name);
            if (known != null && !known.equals(name)) {
                ambiguous.add(entry.typeId());
            }
        }
        ambiguous.forEach(names::remove);
        anyListed |= !listed.isEmpty();
        return listed;
    }
}
