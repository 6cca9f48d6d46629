package dev.vgpu.sysfs;

import dev.vgpu.attach.internal.HostVfio;
import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceFacts;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.sysfs.internal.CreatableTypesCatalog;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * vGPUs of the vendor-specific VFIO framework (vGPU 17+, Ada/Hopper/Blackwell): SR-IOV virtual functions
 * bound to the {@code nvidia} driver with a vGPU type configured.
 *
 * <p>Walks {@code sys/bus/pci/devices} for functions with vendor {@code 0x10de} bound to {@code nvidia}.
 * Physical functions ({@code sriov_totalvfs}) are never advertised; a VF ({@code physfn} link) is a vGPU when
 * {@code nvidia/current_vgpu_type} holds a non-zero type id. Its profile name comes from, in order:
 * <ol>
 * <li>the catalog of its own card: every {@code nvidia/creatable_vgpu_types} of the PF and of the VFs with the
 *     same {@code physfn} (an id named twice differently there is ambiguous and skipped);</li>
 * <li>the {@link Host#vgpuTypes() vGPU type resolver} of that PF (NVML), asked at most once per PF and scan;</li>
 * <li>the name this source learned for that type on that same card earlier (from its catalogs or the resolver,
 *     in this process's life or, with a state directory, before a restart), so a card that fills up, or an NVML
 *     that fails for a scan, does not withdraw devices that are still there; logged once at INFO when used;</li>
 * <li>otherwise the VF is skipped with a reason naming it, the type id and why.</li>
 * </ol>
 * Another card's catalog is never consulted: type ids are card-local. VFs are grouped by profile name
 * ({@code nvidia.com/NVIDIA_H200X-141C}, across cards) and carry their IOMMU group, NUMA node, PF and VFIO cdev,
 * so they are allocated exactly like passthrough devices.
 * <pre>{@code
 * Discovery found = new VendorVfioSource().discover(Host.of(Path.of("/")).withVgpuTypes(nvmlResolver));
 * }</pre>
 * Each VF records its vendor, device and type ids as its identity ({@code vgpu-type:10de:2335:1152});
 * {@link #recheck} compares them with its files now, so a VF reconfigured to another profile (or to none), or a
 * function that is another device now, is never handed out under the old profile.
 *
 * <p>With a {@link Host#stateDirectory() state directory} the learned names survive restarts: the source owns the
 * file {@code vendor-vfio-names.v1} there ({@link LearnedNamesFile}), reads it before its first scan of a root, and
 * rewrites it after a scan that changed the names (never when the directory is only {@link
 * dev.vgpu.core.spi.StateDirectory#forReading for reading}). A name from it is used only for the same card: PF
 * address, PCI device id and NVIDIA driver version ({@code sys/module/nvidia/version}; {@code unknown} when absent,
 * which matches only {@code unknown}), so a driver upgrade or another card in the slot forgets it.
 * <pre>{@code
 * Host host = Host.of(Path.of("/")).withStateDirectory(Path.of("/var/lib/vgpu"));
 * }</pre>
 *
 * <p>Thread-safe; each scan keeps its own state, and the learned names ({@link TypeNameMemory}) are the only state
 * kept across scans that changes what is discovered, per host root and card: a card's names are forgotten when a
 * whole scan no longer sees it. Besides, which skips the last scan logged ({@link SkipLog}) is kept so that a rescan
 * logs at WARN only the skips that are new or changed.
 */
public final class VendorVfioSource implements DeviceSource {

    /** The source name, {@code vendor-vfio}. */
    public static final String NAME = "vendor-vfio";

    private static final Logger LOG = LoggerFactory.getLogger(VendorVfioSource.class);
    private static final String CATALOG = "nvidia/creatable_vgpu_types";
    private static final String CURRENT_TYPE = VfIdentity.CURRENT_TYPE;
    private static final String GPU_INSTANCE = "nvidia/gpu_instance_id";

    private final TypeNameMemory memory = new TypeNameMemory();
    private final SkipLog skipLog = new SkipLog();

    /** Creates the source; {@link java.util.ServiceLoader} does this. */
    public VendorVfioSource() {
    }

    /** Returns {@code vendor-vfio}. */
    @Override
    public String name() {
        return NAME;
    }

    /** Returns 30: after passthrough and mdev. */
    @Override
    public int order() {
        return 30;
    }

    /**
     * Scans {@code sys/bus/pci/devices} once, then names the configured VFs.
     *
     * @throws IOException only when the host root or its {@code sys/bus/pci/devices} is missing or cannot be read
     *                     (a bad mount: the last scan's devices are kept rather than withdrawn)
     */
    @Override
    public Discovery discover(Host host) throws IOException {
        host.stateDirectory().ifPresent(directory -> memory.readState(host.root(), directory));
        ScanState state = new ScanState(host, new Scan(NAME, LOG, skipLog, host), new CardCatalogs(host, memory));
        for (PciBus.Entry entry : PciBus.listPci(host)) {
            inspect(entry, state);
        }
        for (ConfiguredVf vf : state.configured) {
            publish(vf, state);
        }
        // After naming: a catalog's name replaces a resolver's name in memory, never the other way.
        state.catalogs.remember(state.cards);
        host.stateDirectory().ifPresent(directory -> memory.writeState(host.root(), directory));
        return state.scan.done();
    }

    /**
     * Re-reads the VF's {@code vendor}, {@code device} and {@code nvidia/current_vgpu_type} and compares them with
     * what it was discovered with (recorded as identity {@code vgpu-type:10de:2335:1152}); {@code 0} or an empty
     * type file means its vGPU was destroyed. See {@link VfIdentity}.
     */
    @Override
    public DeviceCheck recheck(Host host, Device device) {
        if (!SysfsFiles.isPciAddress(device.id())) {
            return DeviceCheck.same();
        }
        return VfIdentity.check(host, device);
    }

    /** What one scan collects; confined to the scanning thread. */
    private static final class ScanState {
        final Host host;
        final Scan scan;
        final CardCatalogs catalogs;
        final List<ConfiguredVf> configured = new ArrayList<>();
        /** File text → parsed catalog: sibling VFs usually print the same list. */
        final Map<String, CreatableTypesCatalog> parsed = new HashMap<>();
        /** physfn link name → PF address, parsed once per card. */
        final Map<String, PciAddress> physicalFunctions = new HashMap<>();
        /** Profile name → resource name, sanitized once per profile. */
        final Map<String, Optional<ResourceName>> resourceNames = new HashMap<>();
        /** PF → the PCIe root its VFs sit under (empty: none named), read from its first configured VF's link. */
        final Map<PciAddress, Optional<String>> pcieRoots = new HashMap<>();
        /** Every card (PF) seen: a PF itself, or the physfn of a VF. */
        final Set<PciAddress> cards = new HashSet<>();

        ScanState(Host host, Scan scan, CardCatalogs catalogs) {
            this.host = host;
            this.scan = scan;
            this.catalogs = catalogs;
        }
    }

    /** A VF with a vGPU type configured, waiting for every catalog of the scan to be merged. */
    private record ConfiguredVf(String bdf, PciAddress pf, String vendor, String device, long typeId, String group,
                               OptionalInt numa, Optional<String> cdev, OptionalInt gpuInstance, String pcieRoot) {
    }

    private static void inspect(PciBus.Entry entry, ScanState state) {
        Scan scan = state.scan;
        String bdf = entry.name();
        String driver;
        try {
            driver = PciBus.driver(state.host, entry);
        } catch (NoSuchFileException e) {
            scan.skipQuietly(bdf, bdf + ": " + SysfsFiles.describe(e));
            return;
        } catch (IOException e) {
            scan.skip(bdf, bdf + ": cannot read its driver link: " + SysfsFiles.describe(e));
            return;
        }
        if (!"nvidia".equals(driver)) {
            return;
        }
        Path dir = entry.dir();
        if (!SysfsFiles.isPciAddress(bdf)) {
            scan.skip(bdf, bound(bdf) + ": the bus entry is not a PCI address");
            return;
        }
        try {
            String vendor = PciBus.vendor(state.host, entry);
            if (!vendor.equals(PciBus.NVIDIA_VENDOR)) {
                scan.ignore(bdf, "vendor " + vendor + " is not NVIDIA");
                return;
            }
            PciAddress pf = physicalFunction(bdf, dir, state);
            if (pf != null) {
                inspectVf(bdf, dir, pf, vendor, state);
            }
        } catch (IOException e) {
            scan.failed(bdf, bound(bdf), dir, e);
        }
    }

    /** How skip reasons name a function bound to nvidia; made only when one is recorded. */
    private static String bound(String bdf) {
        return bdf + " (bound to nvidia)";
    }

    /** The PF of a VF; null (after noting why) for a PF or a function that is neither. */
    private static PciAddress physicalFunction(String bdf, Path dir, ScanState state) throws IOException {
        String physfn;
        try {
            physfn = SysfsFiles.PHYSFN.linkName(state.host, dir);
        } catch (NoSuchFileException e) {
            if (state.host.files().exists(dir, "sriov_totalvfs", state.host.scanScope())) {
                state.cards.add(PciAddress.parse(bdf));
                mergeCatalog(PciAddress.parse(bdf), bdf, dir, state);
                if (vfsDisabled(dir, state)) {
                    state.scan.skip(bdf, bound(bdf) + ": an SR-IOV physical function with no VFs enabled, so"
                            + " nothing on it can be advertised: enable its VFs for vGPUs"
                            + " (/usr/lib/nvidia/sriov-manage -e " + bdf + ") or bind it to vfio-pci for passthrough");
                } else {
                    state.scan.ignore(bdf, "a physical function is never advertised");
                }
            } else if (state.host.files().exists(dir, CURRENT_TYPE, state.host.scanScope())) {
                state.scan.skip(bdf, bdf + " (bound to nvidia) has " + CURRENT_TYPE
                        + " but neither a physfn link nor sriov_totalvfs, so its physical GPU is unknown");
            } else if (!state.host.files().isDirectory(dir, state.host.scanScope())) {
                throw e;
            } else if (state.host.files().isDirectory(dir, "mdev_supported_types", state.host.scanScope())) {
                state.scan.ignore(bdf, "an mdev parent: the mdev source advertises its mdevs");
            } else {
                // A whole GPU left on the nvidia driver: the usual reason a GPU is missing (README, "Troubleshooting").
                state.scan.skip(bdf, bound(bdf) + ": a GPU on the nvidia driver without SR-IOV VFs or mdev types"
                        + " is not advertised: bind it to vfio-pci for passthrough"
                        + " (driverctl set-override " + bdf + " vfio-pci)");
            }
            return null;
        }
        PciAddress pf = state.physicalFunctions.get(physfn);
        if (pf == null) {
            if (!SysfsFiles.isPciAddress(physfn)) {
                throw new IOException("its physfn link names no PCI address: \""
                        + SysfsFiles.printable(physfn) + "\"");
            }
            pf = PciAddress.parse(physfn);
            state.physicalFunctions.put(physfn, pf);
            state.cards.add(pf);
        }
        return pf;
    }

    /** True when the PF says it has no VFs enabled ({@code sriov_numvfs} is 0); unreadable counts as enabled. */
    private static boolean vfsDisabled(Path dir, ScanState state) {
        try {
            return "0".equals(SysfsFiles.readStripped(state.host, dir, "sriov_numvfs"));
        } catch (IOException e) {
            return false;
        }
    }

    private static void inspectVf(String bdf, Path dir, PciAddress pf, String vendor, ScanState state)
            throws IOException {
        mergeCatalog(pf, bdf, dir, state);
        String current;
        try {
            current = SysfsFiles.readStripped(state.host, dir, CURRENT_TYPE);
        } catch (NoSuchFileException e) {
            if (!state.host.files().isDirectory(dir, state.host.scanScope())) {
                throw e;
            }
            state.scan.ignore(bdf, "no " + CURRENT_TYPE + ", so not vGPU capable");
            return;
        }
        if (current.isEmpty() || current.equals("0")) {
            state.scan.ignore(bdf, "no vGPU type configured");
            return;
        }
        if (current.length() > 18 || !SysfsFiles.isDigits(current)) {
            state.scan.skip(bdf, bound(bdf) + ": " + CURRENT_TYPE + " is not a vGPU type id: \""
                    + SysfsFiles.printable(current) + "\"");
            return;
        }
        if (!PciBus.driverPresent(state.host, dir)) {
            state.scan.ignore(bdf, "its driver link dangles, so it is not bound");
            return;
        }
        String device = SysfsFiles.hexId(state.host, dir, "device");
        String group = SysfsFiles.iommuGroup(state.host, dir);
        state.configured.add(new ConfiguredVf(bdf, pf, vendor, device, Long.parseLong(current), group,
                SysfsFiles.numaNode(state.host, dir), HostVfio.vfioCdev(state.host, dir),
                gpuInstance(dir, state), state.pcieRoots.computeIfAbsent(pf,
                        card -> Optional.ofNullable(PciBus.pcieRoot(dir))).orElse(null)));
    }

    /**
     * The GPU instance a VF of a MIG-backed profile lives on: {@code nvidia/gpu_instance_id} holding a decimal id
     * (docs/HOST-FACTS.md §1c). Missing, unreadable or anything but 1-9 digits is no instance: an XID of that card
     * then concerns the whole card, which is the safe side.
     */
    private static OptionalInt gpuInstance(Path dir, ScanState state) {
        try {
            String text = SysfsFiles.readStripped(state.host, dir, GPU_INSTANCE);
            return !text.isEmpty() && text.length() <= 9 && SysfsFiles.isDigits(text) ? OptionalInt.of(Integer.parseInt(text))
                    : OptionalInt.empty();
        } catch (IOException | RuntimeException e) {
            return OptionalInt.empty();
        }
    }

    /** Adds a function's catalog to its card's; a missing file adds nothing, a bad one is reported. */
    private static void mergeCatalog(PciAddress card, String bdf, Path dir, ScanState state) {
        String text;
        try {
            text = SysfsFiles.read(state.host, dir, CATALOG);
        } catch (NoSuchFileException e) {
            return;
        } catch (IOException e) {
            LOG.warn("{}: cannot read {} of {}, card {} may lack its types: {}", NAME, CATALOG, bdf, card,
                    SysfsFiles.describe(e));
            return;
        }
        CreatableTypesCatalog catalog = state.parsed.get(text);
        if (catalog == null) {
            catalog = CreatableTypesCatalog.parse(text);
            state.parsed.put(text, catalog);
            for (String line : catalog.rejected()) {
                LOG.warn("{}: {} of {} (and of any function printing the same list) has a line that is not"
                        + " \"<id> : <name>\", ignoring it: \"{}\"", NAME, CATALOG, bdf, SysfsFiles.printable(line));
            }
        }
        state.catalogs.merge(card, catalog);
    }

    /** How skip reasons name a configured VF; made only when one is recorded. */
    private static String configured(ConfiguredVf vf) {
        return "VF " + vf.bdf() + " of card " + vf.pf() + " is configured with vGPU type " + vf.typeId();
    }

    private static void publish(ConfiguredVf vf, ScanState state) {
        CardCatalogs.Resolution resolution = state.catalogs.resolve(vf.pf(), vf.typeId());
        if (resolution instanceof CardCatalogs.Resolution.Unnamed unnamed) {
            state.scan.skip(vf.bdf(), configured(vf) + ", but " + unnamed.problem());
        } else if (resolution instanceof CardCatalogs.Resolution.Named named) {
            publish(vf, named.name(), state);
        }
    }

    private static void publish(ConfiguredVf vf, String profile, ScanState state) {
        Optional<ResourceName> name = state.resourceNames.computeIfAbsent(profile, ResourceName::forVgpuProfile);
        if (name.isEmpty()) {
            state.scan.skip(vf.bdf(), configured(vf) + ", whose profile name \"" + SysfsFiles.printable(profile)
                    + "\" gives no valid resource name");
            return;
        }
        state.scan.add(Device.builder(vf.bdf(), name.get(), NAME, Attachment.VFIO_PCI).parent(vf.pf())
                .iommuGroup(vf.group()).numaNode(vf.numa()).vfioCdev(vf.cdev().orElse(null))
                .identity(VfIdentity.of(vf.vendor(), vf.device(), vf.typeId())).gpuInstance(vf.gpuInstance())
                .facts(DeviceFacts.NONE.withProfile(MdevSource.profileOrNull(profile)).withDeviceId(vf.device())
                        .withVgpuTypeId(vf.typeId()).withPcieRoot(vf.pcieRoot())).build(), profile);
    }
}
