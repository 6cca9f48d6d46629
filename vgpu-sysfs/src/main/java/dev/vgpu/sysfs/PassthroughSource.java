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
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whole NVIDIA GPUs bound to a VFIO driver, for PCI passthrough, one device per IOMMU group.
 *
 * <p>Walks {@code sys/bus/pci/devices}; considers each function with vendor {@code 0x10de} whose {@code driver}
 * link names {@code vfio-pci} or {@code nvgrace_gpu_vfio_pci}, and advertises it under the resource named from
 * pci.ids for its device id ({@code nvidia.com/GH100_H200_SXM_141GB}, or {@code nvidia.com/2335} without a name)
 * when its IOMMU group allows (docs/HOST-FACTS.md §1d):
 * <ul>
 *   <li>the group is viable: every function it lists in {@code sys/kernel/iommu_groups/<N>/devices}, PCI bridges
 *       (class {@code 0x0604xx}) aside, is on a VFIO driver; otherwise each NVIDIA VFIO function of it is skipped
 *       with a reason naming the function outside VFIO and its driver;</li>
 *   <li>it is the group's one advertised function: the display-class ({@code 0x03xxxx}) NVIDIA function with the
 *       lowest BDF, else the lowest-BDF NVIDIA function; the others (audio, USB, a second GPU) are skipped naming
 *       it, and Allocate of the advertised one hands the VM the whole group.</li>
 * </ul>
 * A group whose member list is missing or unreadable, or whose members or {@code class} files cannot be read where
 * the answer depends on them, advertises nothing (each NVIDIA VFIO function is skipped with the reason): QEMU
 * refuses a group that is not viable, so a device advertised on a guess could lose the VM it is given, while the
 * skip shows in {@code discover} and the log, and the kernel always writes these files. An SR-IOV virtual function
 * ({@code physfn} link) on a VFIO driver is no whole GPU and is skipped. The IOMMU group (from the
 * {@code iommu_group} link) is required; the NUMA node is kept when non-negative, the VFIO cdev when
 * {@code vfio-dev/} has one. Functions bound to {@code nvidia}, another driver, or none are not passthrough devices
 * and are ignored.
 * <pre>{@code
 * Discovery found = new PassthroughSource().discover(Host.of(Path.of("/")).withPciIds(names));
 * }</pre>
 * Thread-safe: a scan's state lives in its {@code discover} call; the only state kept across scans is which skips
 * the last one logged ({@link SkipLog}): a rescan logs at WARN only the skips that are new or changed.
 */
public final class PassthroughSource implements DeviceSource {

    /** The source name, {@code passthrough}. */
    public static final String NAME = "passthrough";

    private static final Logger LOG = LoggerFactory.getLogger(PassthroughSource.class);
    /** The drivers that hand a function to a VM. */
    static final Set<String> VFIO_DRIVERS = Set.of("vfio-pci", "nvgrace_gpu_vfio_pci");
    private static final IdentityCheck IDENTITY = new IdentityCheck("pci", "PCI device");

    private final SkipLog skipLog = new SkipLog();

    /** Creates the source; {@link java.util.ServiceLoader} does this. */
    public PassthroughSource() {
    }

    /** Returns {@code passthrough}. */
    @Override
    public String name() {
        return NAME;
    }

    /** Returns 10: passthrough runs first. */
    @Override
    public int order() {
        return 10;
    }

    /**
     * Scans {@code sys/bus/pci/devices} once.
     *
     * @throws IOException only when the host root or its {@code sys/bus/pci/devices} is missing or cannot be read
     *                     (a bad mount: the last scan's devices are kept rather than withdrawn)
     */
    @Override
    public Discovery discover(Host host) throws IOException {
        Scan scan = new Scan(NAME, LOG, skipLog, host);
        IommuGroups groups = null;
        for (PciBus.Entry entry : PciBus.listPci(host)) {
            groups = inspect(host, entry, scan, groups);
        }
        return scan.done();
    }

    /**
     * Re-reads the function's {@code vendor} and {@code device} ids and compares them with the ones it was
     * discovered with (recorded as identity {@code pci:10de:2330}), then judges its IOMMU group again: a group that
     * is no longer viable (a sibling rebound to {@code snd_hda_intel} since the scan), or that would now be
     * advertised as another function, has changed too, since QEMU would refuse the group or the VM would share it
     * (docs/HOST-FACTS.md §1d).
     */
    @Override
    public DeviceCheck recheck(Host host, Device device) {
        if (!SysfsFiles.isPciAddress(device.id())) {
            return DeviceCheck.same();
        }
        // One scope for the whole check, so that the group's judgment reuses the vendor the identity read: each file
        // once per check (docs/ARCHITECTURE.md, "Attachment knowledge"). A caller's own scope is kept.
        Host checking = host.scanScope() == ScanScope.none() ? host.forScan() : host;
        Path dir = checking.path(PciBus.PCI_DEVICES).resolve(device.id());
        DeviceCheck identity = IDENTITY.check(device, dir, () -> PciBus.vendor(checking, dir)
                + ":" + SysfsFiles.hexId(checking, dir, "device"), null, null);
        if (!identity.unchanged() || device.iommuGroup().isEmpty() || device.identity().isEmpty()) {
            return identity; // a device without a recorded identity was not found by this source: nothing to judge
        }
        String group = device.iommuGroup().get();
        IommuGroups.Verdict verdict = new IommuGroups(checking).of(group);
        if (verdict instanceof IommuGroups.Verdict.Nothing nothing) {
            return DeviceCheck.changed("the device of viable IOMMU group " + group, "not: " + nothing.why());
        }
        String advertised = ((IommuGroups.Verdict.Advertise) verdict).advertised();
        if (!advertised.equals(device.id())) {
            return DeviceCheck.changed("the device of IOMMU group " + group, "not: the group would be advertised as "
                    + advertised);
        }
        return identity;
    }

    /**
     * Advertises or skips one bus entry.
     *
     * @param groups the scan's group verdicts so far; null until the first NVIDIA function on VFIO needs one
     * @return {@code groups}, made here when this function needed it first
     */
    private static IommuGroups inspect(Host host, PciBus.Entry entry, Scan scan, IommuGroups groups) {
        String bdf = entry.name();
        String driver;
        try {
            driver = PciBus.driver(host, entry);
        } catch (NoSuchFileException e) {
            scan.skipQuietly(bdf, bdf + ": " + SysfsFiles.describe(e));
            return groups;
        } catch (IOException e) {
            scan.skip(bdf, bdf + ": cannot read its driver link: " + SysfsFiles.describe(e));
            return groups;
        }
        if (driver == null || !VFIO_DRIVERS.contains(driver)) {
            return groups;
        }
        Path dir = entry.dir();
        String what = bdf + " (bound to " + driver + ")";
        if (!SysfsFiles.isPciAddress(bdf)) {
            scan.skip(bdf, what + ": the bus entry is not a PCI address");
            return groups;
        }
        String vendor;
        String physfn;
        String device;
        String group;
        OptionalInt numa;
        try {
            vendor = PciBus.vendor(host, entry);
            if (!vendor.equals(PciBus.NVIDIA_VENDOR)) {
                scan.ignore(bdf, "vendor " + vendor + " is not NVIDIA");
                return groups;
            }
            if (!PciBus.driverPresent(host, dir)) {
                scan.ignore(bdf, "its driver link dangles, so it is not bound");
                return groups;
            }
            physfn = physfn(host, dir);
            if (physfn != null) {
                scan.skip(bdf, what + ": an SR-IOV virtual function (physfn → " + physfn + ") bound to " + driver
                        + " is not a whole GPU; vGPUs on VFs are advertised with the VF left on the nvidia driver");
                return groups;
            }
            device = SysfsFiles.hexId(host, dir, "device");
            group = SysfsFiles.iommuGroup(host, dir);
            numa = SysfsFiles.numaNode(host, dir);
        } catch (IOException e) {
            scan.failed(bdf, what, dir, e);
            return groups;
        }
        if (groups == null) {
            groups = new IommuGroups(host);
        }
        IommuGroups.Verdict verdict = groups.of(group);
        if (!verdict.members().isEmpty() && !verdict.members().contains(bdf)) {
            scan.skip(bdf, what + ": its iommu_group link names IOMMU group " + group
                    + ", but the group does not list it");
            return groups;
        }
        if (verdict instanceof IommuGroups.Verdict.Nothing nothing) {
            scan.skip(bdf, what + ": " + nothing.why());
            return groups;
        }
        String advertised = ((IommuGroups.Verdict.Advertise) verdict).advertised();
        if (!advertised.equals(bdf)) {
            // An audio or USB sibling of a GPU: the normal case, nothing to fix, so DEBUG rather than WARN.
            scan.skipQuietly(bdf, what + ": IOMMU group " + group + " is advertised as " + advertised
                    + " (one device per group; the VM that gets it gets the whole group)");
            return groups;
        }
        Optional<String> cdev = HostVfio.vfioCdev(host, dir);
        Optional<String> pciName = host.pciIds().deviceName(PciBus.NVIDIA_VENDOR, device);
        Optional<ResourceName> name = ResourceName.forPciDeviceName(pciName.orElse(null), device);
        if (name.isEmpty()) {
            scan.skip(bdf, what + ": device id " + device + " gives no valid resource name");
            return groups;
        }
        String profile = pciName.map(CardCatalogs::collapseWhitespace).orElse(device);
        scan.add(Device.builder(bdf, name.get(), NAME, Attachment.VFIO_PCI)
                .iommuGroup(group).numaNode(numa).vfioCdev(cdev.orElse(null))
                .identity(IDENTITY.identity(vendor + ":" + device))
                .facts(DeviceFacts.NONE.withProfile(MdevSource.profileOrNull(profile)).withDeviceId(device)
                        .withPcieRoot(PciBus.pcieRoot(dir))).build(),
                profile);
        return groups;
    }

    /** The last component of the {@code physfn} link, which only an SR-IOV virtual function has; null without one. */
    private static String physfn(Host host, Path dir) throws IOException {
        try {
            return SysfsFiles.printable(SysfsFiles.PHYSFN.linkName(host, dir));
        } catch (NoSuchFileException e) {
            return null;
        }
    }
}
