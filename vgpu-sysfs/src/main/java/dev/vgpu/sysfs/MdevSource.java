package dev.vgpu.sysfs;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.DeviceFacts;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mediated vGPUs (mdev, Maxwell to Ampere), one device per entry of {@code sys/bus/mdev/devices}.
 *
 * <p>The device id is the mdev's UUID; the resource is its type's {@code mdev_type/name} with whitespace runs
 * turned into {@code _} ({@code GRID T4-1Q} → {@code nvidia.com/GRID_T4-1Q}); the parent GPU is the
 * second-to-last component of the entry's link text (on Ampere a VF); the NUMA node is the parent's; the IOMMU
 * group is the mdev's own. An mdev is ours only when its parent's {@code vendor} is NVIDIA's ({@code 0x10de}):
 * others (Intel GVT-g's {@code i915-GVTg_V5_4}, ...) are ignored, not skipped, and a parent whose vendor cannot be
 * read is a skip (docs/HOST-FACTS.md §1e). A host without {@code sys/bus/mdev} has no mdev devices; a host root
 * without {@code sys/bus}, or with {@code sys/bus/mdev} but no {@code devices} in it, is a failed scan (a bad mount
 * keeps the last scan's devices rather than withdrawing them).
 * <pre>{@code
 * Discovery found = new MdevSource().discover(Host.of(Path.of("/")));
 * }</pre>
 * Thread-safe: a scan's state lives in its {@code discover} call; the only state kept across scans is which skips
 * the last one logged ({@link SkipLog}): a rescan logs at WARN only the skips that are new or changed.
 */
public final class MdevSource implements DeviceSource {

    /** The source name, {@code mdev}. */
    public static final String NAME = "mdev";

    private static final Logger LOG = LoggerFactory.getLogger(MdevSource.class);
    private static final String MDEV_DEVICES = PciBus.MDEV_DEVICES;
    private static final IdentityCheck IDENTITY = new IdentityCheck("mdev-type", "mdev type");

    private final SkipLog skipLog = new SkipLog();

    /** Creates the source; {@link java.util.ServiceLoader} does this. */
    public MdevSource() {
    }

    /** Returns {@code mdev}. */
    @Override
    public String name() {
        return NAME;
    }

    /** Returns 20: after passthrough, before vendor-vfio. */
    @Override
    public int order() {
        return 20;
    }

    /**
     * Scans {@code sys/bus/mdev/devices} once.
     *
     * @throws IOException only when the host root, {@code sys/bus} or an existing {@code sys/bus/mdev} cannot be
     *                     listed
     */
    @Override
    public Discovery discover(Host host) throws IOException {
        Scan scan = new Scan(NAME, LOG, skipLog, host);
        Map<String, ParentFacts> parents = new HashMap<>();
        for (PciBus.Entry mdev : PciBus.listMdev(host)) {
            inspect(host, mdev.name(), mdev.dir(), scan, parents);
        }
        return scan.done();
    }

    /**
     * Re-reads the mdev's {@code mdev_type} link and compares the type with the one it was discovered with
     * (recorded as identity {@code mdev-type:nvidia-558}); an mdev removed, or re-created with another type under
     * the same UUID, has changed.
     */
    @Override
    public DeviceCheck recheck(Host host, Device device) {
        if (!SysfsFiles.isToken(device.id()) || device.id().startsWith(".")) {
            return DeviceCheck.same();
        }
        Path dir = host.path(MDEV_DEVICES).resolve(device.id());
        return IDENTITY.check(device, dir, () -> SysfsFiles.linkName(dir.resolve("mdev_type")), null, null);
    }

    /** What every mdev of one parent shares, read once per parent and scan. */
    private record ParentFacts(OptionalInt numa, String deviceId) {
    }

    private static void inspect(Host host, String uuid, Path mdev, Scan scan, Map<String, ParentFacts> parents) {
        String what = "mdev " + SysfsFiles.printable(uuid);
        if (!SysfsFiles.isToken(uuid)) {
            scan.skip(uuid, what + ": the name is not a usable device id");
            return;
        }
        String parent;
        String typeId;
        String typeName;
        String group;
        ParentFacts facts;
        try {
            parent = parentOf(Files.readSymbolicLink(mdev));
            what += " on " + parent;
            Path parentDir = host.path(PciBus.PCI_DEVICES).resolve(parent);
            String vendor = PciBus.vendor(host, parentDir);
            if (!vendor.equals(PciBus.NVIDIA_VENDOR)) {
                scan.ignore(uuid, "its parent " + parent + " has vendor " + vendor + ", not NVIDIA (e.g. Intel GVT-g)");
                return;
            }
            typeId = SysfsFiles.linkName(mdev.resolve("mdev_type"));
            what += " of type " + typeId;
            typeName = SysfsFiles.readStripped(host, mdev, "mdev_type/name");
            group = SysfsFiles.iommuGroup(host, mdev);
            facts = parents.get(parent);
            if (facts == null) {
                facts = new ParentFacts(SysfsFiles.numaNode(host, parentDir),
                        deviceIdOrNull(parentDir, host));
                parents.put(parent, facts);
            }
        } catch (NotLinkException e) {
            scan.skip(uuid, what + ": " + (mdev.toString().equals(e.getFile())
                    ? "the bus entry is not a link into a parent device" : SysfsFiles.describe(e)));
            return;
        } catch (IOException e) {
            scan.failed(uuid, what, mdev, e);
            return;
        }
        Optional<ResourceName> name = ResourceName.forMdevType(typeName);
        if (name.isEmpty()) {
            scan.skip(uuid, what + ": the type name \"" + SysfsFiles.printable(typeName)
                    + "\" gives no valid resource name");
            return;
        }
        String profile = CardCatalogs.collapseWhitespace(typeName);
        scan.add(Device.builder(uuid, name.get(), NAME, Attachment.MEDIATED).parent(PciAddress.parse(parent))
                .iommuGroup(group).numaNode(facts.numa()).identity(IDENTITY.identity(typeId))
                .facts(DeviceFacts.NONE.withProfile(profileOrNull(profile)).withDeviceId(facts.deviceId())).build(),
                profile);
    }

    /** A profile fact, or null for a name no attribute can carry (control characters: the resource name drops them). */
    static String profileOrNull(String name) {
        return DeviceFacts.isProfile(name) ? name : null;
    }

    /** The parent's PCI device id for the facts; null when unreadable (the mdev is still advertised without it). */
    private static String deviceIdOrNull(Path parentDir, Host host) {
        try {
            return SysfsFiles.hexId(host, parentDir, "device");
        } catch (IOException e) {
            return null;
        }
    }

    /** The parent BDF: the second-to-last component of the link text, as the kernel lays mdevs out. */
    private static String parentOf(Path linkText) throws IOException {
        int count = linkText.getNameCount();
        String parent = count >= 2 ? linkText.getName(count - 2).toString() : "";
        if (!SysfsFiles.isPciAddress(parent)) {
            throw new IOException("its link \"" + SysfsFiles.printable(linkText.toString())
                    + "\" does not lead into a PCI function's directory");
        }
        return parent;
    }
}
