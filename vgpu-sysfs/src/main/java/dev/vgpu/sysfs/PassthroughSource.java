package dev.vgpu.sysfs;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whole NVIDIA GPUs (and their other functions) bound to a VFIO driver, for PCI passthrough.
 *
 * <p>Walks {@code sys/bus/pci/devices}; advertises each function with vendor {@code 0x10de} whose
 * {@code driver} link names {@code vfio-pci} or {@code nvgrace_gpu_vfio_pci}, under the resource named from
 * pci.ids for its device id ({@code nvidia.com/GH100_H200_SXM_141GB}, or {@code nvidia.com/2335} without a
 * name). The IOMMU group (from the {@code iommu_group} link) is required; the NUMA node is kept when
 * non-negative, the VFIO cdev when {@code vfio-dev/} has one. Functions bound to {@code nvidia}, another
 * driver, or none are not passthrough devices and are ignored.
 * <pre>{@code
 * Discovery found = new PassthroughSource().discover(Host.of(Path.of("/")).withPciIds(names));
 * }</pre>
 * Stateless and thread-safe.
 */
public final class PassthroughSource implements DeviceSource {

    /** The source name, {@code passthrough}. */
    public static final String NAME = "passthrough";

    private static final Logger LOG = LoggerFactory.getLogger(PassthroughSource.class);
    private static final Set<String> VFIO_DRIVERS = Set.of("vfio-pci", "nvgrace_gpu_vfio_pci");
    private static final IdentityCheck IDENTITY = new IdentityCheck("pci", "PCI device");

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
        Scan scan = new Scan(NAME, LOG);
        for (PciBus.Entry entry : PciBus.listPci(host)) {
            inspect(host, entry.dir(), entry.name(), scan);
        }
        return scan.done();
    }

    /**
     * Re-reads the function's {@code vendor} and {@code device} ids and compares them with the ones it was
     * discovered with (recorded as identity {@code pci:10de:2330}).
     */
    @Override
    public DeviceCheck recheck(Host host, Device device) {
        if (!SysfsFiles.isPciAddress(device.id())) {
            return DeviceCheck.same();
        }
        Path dir = host.path(PciBus.PCI_DEVICES).resolve(device.id());
        return IDENTITY.check(device, dir, () -> SysfsFiles.hexId(dir, "vendor", host.scanScope()) + ":"
                + SysfsFiles.hexId(dir, "device", host.scanScope()), null, null);
    }

    private static void inspect(Host host, Path dir, String bdf, Scan scan) {
        String driver;
        try {
            driver = PciBus.driver(host, dir);
        } catch (NoSuchFileException e) {
            scan.skipQuietly(bdf, bdf + ": " + SysfsFiles.describe(e));
            return;
        } catch (IOException e) {
            scan.skip(bdf, bdf + ": cannot read its driver link: " + SysfsFiles.describe(e));
            return;
        }
        if (driver == null || !VFIO_DRIVERS.contains(driver)) {
            return;
        }
        String what = bdf + " (bound to " + driver + ")";
        if (!SysfsFiles.isPciAddress(bdf)) {
            scan.skip(bdf, what + ": the bus entry is not a PCI address");
            return;
        }
        String vendor;
        String device;
        String group;
        OptionalInt numa;
        try {
            vendor = PciBus.vendor(host, dir);
            if (!vendor.equals(PciBus.NVIDIA_VENDOR)) {
                scan.ignore(bdf, "vendor " + vendor + " is not NVIDIA");
                return;
            }
            if (!PciBus.driverPresent(dir)) {
                scan.ignore(bdf, "its driver link dangles, so it is not bound");
                return;
            }
            device = SysfsFiles.hexId(dir, "device", host.scanScope());
            group = SysfsFiles.iommuGroup(dir);
            numa = SysfsFiles.numaNode(dir, host.scanScope());
        } catch (IOException e) {
            scan.failed(bdf, what, dir, e);
            return;
        }
        Optional<String> cdev = SysfsFiles.vfioCdev(dir);
        Optional<String> pciName = host.pciIds().deviceName(PciBus.NVIDIA_VENDOR, device);
        Optional<ResourceName> name = ResourceName.forPciDeviceName(pciName.orElse(null), device);
        if (name.isEmpty()) {
            scan.skip(bdf, what + ": device id " + device + " gives no valid resource name");
            return;
        }
        scan.add(Device.builder(bdf, name.get(), NAME, Attachment.VFIO_PCI)
                .iommuGroup(group).numaNode(numa).vfioCdev(cdev.orElse(null))
                .identity(IDENTITY.identity(vendor + ":" + device)).build(),
                pciName.map(CardCatalogs::collapseWhitespace).orElse(device));
    }
}
