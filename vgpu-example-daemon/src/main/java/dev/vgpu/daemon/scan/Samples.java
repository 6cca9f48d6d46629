package dev.vgpu.daemon.scan;

import dev.vgpu.core.PciIds;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Sample hosts bundled in the jar, written as real sysfs trees (relative symlinks and all) into a temporary
 * directory, so {@code discover --sample} and {@code demo} show the whole path without a GPU. Type ids and
 * IOMMU group numbers are illustrative; names follow the real driver's families.
 */
public final class Samples {

    /** Two H200 SXM cards in SR-IOV vGPU mode: mixed MIG-backed profiles on one, the other fully consumed. */
    public static final String H200_SRIOV = "h200-sriov";
    /** An A10 host with mdev vGPUs (pre-Ada). */
    public static final String A10_MDEV = "a10-mdev";
    /** Whole GPUs on vfio-pci (one with its audio function in its group) next to other functions, iommufd, EGM. */
    public static final String PASSTHROUGH = "passthrough";

    public static final String CARD_A = "0000:1b:00.0";
    public static final String CARD_B = "0000:9b:00.0";
    public static final String PASSTHROUGH_GPU = "0000:41:00.0";
    public static final long H200_1_18C = 1414;
    public static final long H200_2_35C = 1416;
    public static final long H200_3_71C = 1418;
    public static final long H200_141C = 1428;
    public static final Map<Long, String> H200_TYPES = Map.of(
            H200_1_18C, "NVIDIA H200X-1-18C",
            H200_2_35C, "NVIDIA H200X-2-35C",
            H200_3_71C, "NVIDIA H200X-3-71C",
            H200_141C, "NVIDIA H200X-141C");

    private static final Map<String, Consumer<SysfsTree>> BUILDERS = Map.of(
            H200_SRIOV, Samples::h200Sriov,
            A10_MDEV, Samples::a10Mdev,
            PASSTHROUGH, Samples::passthrough);

    private Samples() {
    }

    /** The sample names, for the help and messages (a constant: naming it does not load this class). */
    public static final String NAMES = A10_MDEV + ", " + H200_SRIOV + ", " + PASSTHROUGH;

    /** A sample tree on disk; closing deletes it. */
    public record Materialized(Path root, SysfsTree tree) implements AutoCloseable {
        @Override
        public void close() {
            SysfsTree.deleteRecursively(root);
        }
    }

    /**
     * The name, when it is a sample's (or null); read with the command line, before anything runs.
     *
     * @throws UsageError naming the samples there are
     */
    public static String requireKnown(String name) {
        if (name != null && !BUILDERS.containsKey(name)) {
            throw new UsageError("unknown sample \"" + name + "\"; choose one of " + NAMES);
        }
        return name;
    }

    /** Writes a sample into a fresh temporary directory. */
    public static Materialized materialize(String name) throws IOException {
        Consumer<SysfsTree> builder = BUILDERS.get(requireKnown(name));
        Path root = Files.createTempDirectory("vgpu-sample-" + name + "-");
        SysfsTree tree = SysfsTree.at(root);
        builder.accept(tree);
        return new Materialized(root, tree);
    }

    /** The pci.ids names for samples: the file given with {@code --pci-ids}, else the bundled excerpt. */
    public static PciIdsDatabase pciIdsFor(HostOptions options) {
        return options.loadPciIds(() -> {
            try (Reader reader = new InputStreamReader(
                    Samples.class.getResourceAsStream("samples-pci.ids"), StandardCharsets.ISO_8859_1)) {
                return new PciIdsDatabase(PciIds.parse(reader, Set.of(PciIds.NVIDIA)), "the samples' excerpt");
            } catch (IOException e) {
                throw new UncheckedIOException("bundled samples-pci.ids is unreadable", e);
            }
        });
    }

    static void h200Sriov(SysfsTree t) {
        // Card A: 8 VFs; two run 1-18C, one runs 2-35C, the rest are free. What is still creatable is listed
        // on the free VFs and the PF; configured VFs list only their own type, as the driver does.
        t.sriovCard(CARD_A, 0x2335).numa(0).virtualFunctions(8, 100).vfioCdevs(10)
                .catalog(Map.of(H200_1_18C, H200_TYPES.get(H200_1_18C), H200_2_35C, H200_TYPES.get(H200_2_35C)))
                .create();
        configure(t, SysfsTree.vfAddress(CARD_A, 0), H200_1_18C);
        configure(t, SysfsTree.vfAddress(CARD_A, 1), H200_1_18C);
        configure(t, SysfsTree.vfAddress(CARD_A, 2), H200_2_35C);
        // Card B: one VF holds the whole card (141C); every catalog on the card prints only its header, so
        // only NVML can name that VF's profile.
        t.sriovCard(CARD_B, 0x2335).numa(1).virtualFunctions(4, 200).vfioCdevs(30).catalog(Map.of()).create();
        t.configureVf(SysfsTree.vfAddress(CARD_B, 0), H200_141C);
        // A whole H100 for passthrough next to the vGPU cards, and an Intel NIC that is never advertised.
        t.passthroughGpu(PASSTHROUGH_GPU, 0x2331).iommuGroup(41).numa(0).vfioCdev("vfio3").create();
        t.function("0000:3b:00.0", 0x8086, 0x1572).driver("i40e").iommuGroup(30).numa(0).create();
        t.iommufd();
    }

    private static void configure(SysfsTree t, String vf, long type) {
        t.configureVf(vf, type);
        t.rewriteCatalog(vf, Map.of(type, H200_TYPES.get(type)));
    }

    static void a10Mdev(SysfsTree t) {
        t.nvidiaGpu("0000:06:00.0", 0x2236).numa(0).iommuGroup(20).create();
        t.nvidiaGpu("0000:86:00.0", 0x2236).numa(1).iommuGroup(21).create();
        t.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-593", "NVIDIA A10-8Q", 40);
        t.mdev("b0d2c9a4-3c84-4f5e-9a0e-0f6d0b1f8e21", "0000:06:00.0", "nvidia-593", "NVIDIA A10-8Q", 41);
        t.mdev("c7e1f3b2-5d6a-4b8c-8e9f-1a2b3c4d5e6f", "0000:86:00.0", "nvidia-594", "NVIDIA A10-12Q", 42);
    }

    static void passthrough(SysfsTree t) {
        // An H100 and its audio function in one IOMMU group, both on vfio-pci as a viable group needs: the GPU is
        // the group's one device, the audio function is skipped naming it and goes to the VM with it.
        t.passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).numa(0).vfioCdev("vfio3").create();
        t.function("0000:41:00.1", 0x10de, 0x22e8).driver("vfio-pci").iommuGroup(41).numa(0).vfioCdev("vfio4")
                .pciClass(0x040300).create();
        t.passthroughGpu("0000:c1:00.0", 0x2331).iommuGroup(97).numa(1).vfioCdev("vfio7").create();
        t.passthroughGpu("0009:01:00.0", 0x2335).driver("nvgrace_gpu_vfio_pci").iommuGroup(12).vfioCdev("vfio9")
                .create();
        // On the nvidia driver without VFs: never advertised, skipped saying to bind it to vfio-pci.
        t.nvidiaGpu("0000:e1:00.0", 0x26b9).iommuGroup(120).numa(1).create();
        t.function("0000:3b:00.0", 0x15b3, 0x101d).driver("mlx5_core").iommuGroup(30).numa(0).create();
        t.iommufd().egm(4, "0009:01:00.0");
    }
}
