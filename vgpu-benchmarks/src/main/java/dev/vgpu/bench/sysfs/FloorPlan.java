package dev.vgpu.bench.sysfs;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The floor of a scan: the files, links and directories the three sysfs sources look at, as a precomputed list
 * of plain {@link Files} calls ({@code readAllBytes}, {@code readSymbolicLink}, directory listing, {@code isDirectory},
 * {@code exists}). Built by walking the tree once with the sources' decisions (setup, not measured);
 * {@link #run()} then does only the I/O, with no parsing, branching or path building. It replays every read the scan
 * makes, those it gained since issue 13 included: a configured VF's {@code device} and {@code nvidia/gpu_instance_id},
 * a PF's {@code sriov_numvfs}, a card's PCIe-root link, a passthrough function's {@code physfn}, group listing and
 * PCIe root.
 */
final class FloorPlan {

    enum Kind { READ, READ_LINK, LIST, IS_DIRECTORY, EXISTS }

    record Op(Kind kind, Path path) {
    }

    private static final Set<String> VFIO_DRIVERS = Set.of("vfio-pci", "nvgrace_gpu_vfio_pci");

    private final List<Op> ops;

    private FloorPlan(List<Op> ops) {
        this.ops = List.copyOf(ops);
    }

    /**
     * Plans the floor for a host root: every operation once ({@code perSource} false), or the operations of each
     * of the three sources one after the other as if they shared nothing ({@code perSource} true: both PCI sources
     * list the bus and read every function's {@code driver} link).
     */
    static FloorPlan of(Path root, boolean perSource) throws IOException {
        List<Op> ops = new ArrayList<>();
        Path bus = root.resolve("sys/bus/pci/devices");
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(bus)) {
            listing.forEach(entries::add);
        }
        if (perSource) {
            ops.add(new Op(Kind.IS_DIRECTORY, root));
            ops.add(new Op(Kind.LIST, bus));
            for (Path entry : entries) {
                planFunction(entry, ops, true, false, new HashSet<>());
            }
        }
        ops.add(new Op(Kind.IS_DIRECTORY, root));
        ops.add(new Op(Kind.LIST, root.resolve("sys/bus/mdev/devices")));
        if (perSource) {
            ops.add(new Op(Kind.IS_DIRECTORY, root));
        }
        ops.add(new Op(Kind.LIST, bus));
        Set<String> pcieRootsRead = new HashSet<>();
        for (Path entry : entries) {
            planFunction(entry, ops, !perSource, true, pcieRootsRead);
        }
        return new FloorPlan(ops);
    }

    private static void planFunction(Path dir, List<Op> ops, boolean passthrough, boolean vendorVfio,
                                     Set<String> pcieRootsRead) throws IOException {
        ops.add(new Op(Kind.READ_LINK, dir.resolve("driver")));
        if (!Files.isSymbolicLink(dir.resolve("driver"))) {
            ops.add(new Op(Kind.IS_DIRECTORY, dir));
            return;
        }
        String driver = Files.readSymbolicLink(dir.resolve("driver")).getFileName().toString();
        boolean vfio = passthrough && VFIO_DRIVERS.contains(driver);
        boolean nvidia = vendorVfio && driver.equals("nvidia");
        if (!vfio && !nvidia) {
            return;
        }
        ops.add(new Op(Kind.READ, dir.resolve("vendor")));
        if (!Files.readString(dir.resolve("vendor")).strip().equals("0x10de")) {
            return;
        }
        if (vfio) {
            ops.add(new Op(Kind.IS_DIRECTORY, dir.resolve("driver")));
            ops.add(new Op(Kind.READ_LINK, dir.resolve("physfn")));
            if (Files.isSymbolicLink(dir.resolve("physfn"))) {
                return; // a VF on vfio-pci: no whole GPU
            }
            ops.add(new Op(Kind.READ, dir.resolve("device")));
            planDevice(dir, ops);
            // the group's member list (each member's driver and vendor are reads above), the bus entry's link
            Path group = Files.readSymbolicLink(dir.resolve("iommu_group")).getFileName();
            ops.add(new Op(Kind.LIST, dir.getParent().getParent().getParent().getParent()
                    .resolve("kernel/iommu_groups").resolve(group).resolve("devices")));
            ops.add(new Op(Kind.READ_LINK, dir));
            return;
        }
        ops.add(new Op(Kind.READ_LINK, dir.resolve("physfn")));
        if (!Files.isSymbolicLink(dir.resolve("physfn"))) {
            ops.add(new Op(Kind.EXISTS, dir.resolve("sriov_totalvfs")));
            if (Files.exists(dir.resolve("sriov_totalvfs"))) {
                ops.add(new Op(Kind.READ, dir.resolve("nvidia/creatable_vgpu_types")));
                ops.add(new Op(Kind.READ, dir.resolve("sriov_numvfs")));
            }
            return;
        }
        ops.add(new Op(Kind.READ, dir.resolve("nvidia/creatable_vgpu_types")));
        ops.add(new Op(Kind.READ, dir.resolve("nvidia/current_vgpu_type")));
        String current = Files.readString(dir.resolve("nvidia/current_vgpu_type")).strip();
        if (!current.isEmpty() && !current.equals("0")) {
            ops.add(new Op(Kind.IS_DIRECTORY, dir.resolve("driver")));
            ops.add(new Op(Kind.READ, dir.resolve("device")));
            planDevice(dir, ops);
            ops.add(new Op(Kind.READ, dir.resolve("nvidia/gpu_instance_id")));
            // the PCIe root, read from the first configured VF's bus entry link of each card
            if (pcieRootsRead.add(Files.readSymbolicLink(dir.resolve("physfn")).getFileName().toString())) {
                ops.add(new Op(Kind.READ_LINK, dir));
            }
        }
    }

    private static void planDevice(Path dir, List<Op> ops) {
        ops.add(new Op(Kind.READ_LINK, dir.resolve("iommu_group")));
        ops.add(new Op(Kind.READ, dir.resolve("numa_node")));
        ops.add(new Op(Kind.LIST, dir.resolve("vfio-dev")));
    }

    /**
     * Writes the plan for the C floor ({@code src/main/c/floor.c}): one operation a line, a letter for the kind
     * ({@code R} read, {@code L} link, {@code D} listing, {@code S} is-directory, {@code E} exists), a space and
     * the path.
     */
    void writeTo(Path file) throws IOException {
        StringBuilder text = new StringBuilder();
        for (Op op : ops) {
            char letter = switch (op.kind()) {
                case READ -> 'R';
                case READ_LINK -> 'L';
                case LIST -> 'D';
                case IS_DIRECTORY -> 'S';
                case EXISTS -> 'E';
            };
            text.append(letter).append(' ').append(op.path()).append('\n');
        }
        Files.writeString(file, text);
    }

    /** How many operations a run does. */
    int size() {
        return ops.size();
    }

    /** Counts operations of one kind. */
    long count(Kind kind) {
        return ops.stream().filter(op -> op.kind() == kind).count();
    }

    /** Does every operation once; returns a value derived from the results so nothing is optimized away. */
    long run() throws IOException {
        long sum = 0;
        for (Op op : ops) {
            try {
                switch (op.kind()) {
                    case READ -> sum += Files.readAllBytes(op.path()).length;
                    case READ_LINK -> sum += Files.readSymbolicLink(op.path()).getNameCount();
                    case LIST -> {
                        try (DirectoryStream<Path> listing = Files.newDirectoryStream(op.path())) {
                            for (Path ignored : listing) {
                                sum++;
                            }
                        }
                    }
                    case IS_DIRECTORY -> sum += Files.isDirectory(op.path()) ? 1 : 0;
                    case EXISTS -> sum += Files.exists(op.path()) ? 1 : 0;
                    default -> throw new IllegalStateException(op.toString());
                }
            } catch (NoSuchFileException e) {
                sum--;
            }
        }
        return sum;
    }
}
