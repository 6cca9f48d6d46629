package dev.vgpu.bench.sysfs;

import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a large vendor-VFIO host with {@link SysfsTree}: 16 H200 PFs with 64 VFs each and 4,000 functions of
 * other vendors (NICs, NVMe, bridges; one in ten unbound), on whatever file system the root is on.
 *
 * <p>On cards 0-13 the even VFs are configured (two profiles alternating), configured VFs print a header-only
 * catalog and the others the full list, as the driver does. Cards 14 and 15 are fully consumed: every VF is
 * configured and every catalog is header-only, so their names come from {@link #resolver()} (NVML's role).
 */
public final class LargeHost {

    /** Physical GPUs. */
    public static final int CARDS = 16;
    /** Virtual functions per physical GPU. */
    public static final int VFS_PER_CARD = 64;
    /** Functions of other vendors. */
    public static final int OTHER_FUNCTIONS = 4000;
    /** VFs the three sources advertise on this host: 14 cards x 32 + 2 cards x 64. */
    public static final int EXPECTED_DEVICES = 14 * 32 + 2 * 64;

    private static final Map<Long, String> CATALOG = catalog();
    private static final int[][] OTHER_IDS = {{0x8086, 0x1572}, {0x15b3, 0x101d}, {0x144d, 0xa80a}, {0x1022, 0x14a4}};
    private static final String[] OTHER_DRIVERS = {"i40e", "mlx5_core", "nvme", "pcieport"};

    private LargeHost() {
    }

    private static Map<Long, String> catalog() {
        Map<Long, String> types = new LinkedHashMap<>();
        String[] sizes = {"1-18C", "2-35C", "3-71C", "4-71C", "7-141C", "4C", "8C", "16C", "35C", "71C", "141C"};
        for (int i = 0; i < sizes.length; i++) {
            types.put(1414L + i, "NVIDIA H200X-" + sizes[i]);
        }
        return types;
    }

    /** The PF address of card {@code i}. */
    public static String pf(int card) {
        return String.format(Locale.ROOT, "0000:%02x:00.0", 0x10 + card * 8);
    }

    /** Writes the whole host under the root. */
    public static void write(Path root) {
        SysfsTree tree = SysfsTree.at(root).iommufd();
        int group = 100;
        for (int card = 0; card < CARDS; card++) {
            boolean consumed = card >= CARDS - 2;
            tree.sriovCard(pf(card), 0x2335).numa(card % 2).virtualFunctions(VFS_PER_CARD, group)
                    .vfioCdevs(group).catalog(consumed ? Map.of() : CATALOG).create();
            for (int vf = 0; vf < VFS_PER_CARD; vf++) {
                if (consumed || vf % 2 == 0) {
                    String bdf = SysfsTree.vfAddress(pf(card), vf);
                    tree.configureVf(bdf, vf % 4 == 0 ? 1414 : 1420).rewriteCatalog(bdf, Map.of());
                }
            }
            group += VFS_PER_CARD;
        }
        for (int k = 0; k < OTHER_FUNCTIONS; k++) {
            int[] ids = OTHER_IDS[k % OTHER_IDS.length];
            String bdf = String.format(Locale.ROOT, "0001:%02x:%02x.%x", k / 256, k / 8 % 32, k % 8);
            tree.function(bdf, ids[0], ids[1]).driver(k % 10 == 0 ? null : OTHER_DRIVERS[k % OTHER_DRIVERS.length])
                    .iommuGroup(10_000 + k).withoutGroupNode().numa(k % 2).create();
        }
    }

    /**
     * Writes the floor plan of a host written by {@link #write} (every file and link a scan needs, once) for the C
     * floor program.
     */
    public static void writeFloorPlan(Path root, Path planFile) throws java.io.IOException {
        FloorPlan.of(root, false).writeTo(planFile);
    }

    /** Names the consumed cards' types, as NVML would; knows every card's list. */
    public static VgpuTypeResolver resolver() {
        return pf -> VgpuTypeNames.of(CATALOG);
    }
}
