package dev.vgpu.testing.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.vgpu.core.Device;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The generic contract of a {@link DeviceSource}, as JUnit 5 tests that a source's own test class inherits: extend
 * it, say how to make the source and how to write a host on which it finds devices, and every case here runs
 * against your source on a real file tree.
 * <pre>{@code
 * class LabSourceContractTest extends DeviceSourceContract {
 *     protected DeviceSource source() { return new LabSource(); }
 *     protected void populate(SysfsTree tree) {
 *         tree.function("0000:65:00.0", 0x10de, 0x2335).driver("vfio-pci").iommuGroup(65).create();
 *         tree.writeFile("etc/lab-gpus", "0000:65:00.0\n");
 *     }
 * }
 * }</pre>
 * The cases: devices are the source's own, with unique ids, and fit in a {@link Snapshot}; two scans of one host
 * agree; a missing root, a root that is a plain file and an empty root give an {@link IOException} or nothing, never
 * another exception; every device {@link DeviceSource#recheck rechecks} as unchanged on an unchanged host, and a
 * recheck on an emptied host answers instead of throwing. The built-in sources run this contract too.
 */
public abstract class DeviceSourceContract {

    /** A fresh directory per test; the host root is {@code <tempDir>/host}. */
    @TempDir
    protected Path tempDir;

    /** Creates a contract test. */
    protected DeviceSourceContract() {
    }

    /**
     * The source under test; called once per test.
     *
     * @return a new source
     */
    protected abstract DeviceSource source();

    /**
     * Writes a host on which the source finds at least one device.
     *
     * @param tree an empty tree at the host root
     */
    protected abstract void populate(SysfsTree tree);

    /** A populated host: at least one device, each the source's own, unique ids, fit for a snapshot. */
    @Test
    public void findsItsOwnDevicesWithUniqueIdsOnAPopulatedHost() throws IOException {
        DeviceSource source = source();
        Discovery found = source.discover(populatedHost());

        assertFalse(found.devices().isEmpty(), "populate() wrote a host with devices, but none was found");
        Set<String> ids = new HashSet<>();
        for (Device device : found.devices()) {
            assertEquals(source.name(), device.source(), "device " + device.id() + " names another source");
            assertTrue(ids.add(device.id()), "device id " + device.id() + " is listed twice");
        }
        Snapshot snapshot = Snapshot.builder().add(source.name(), found).build();
        assertEquals(found.devices().size(), snapshot.deviceCount(), "the snapshot dropped devices: "
                + snapshot.skipped());
    }

    /** Two scans of one unchanged host agree, devices and skips alike. */
    @Test
    public void twoScansOfOneHostAgree() throws IOException {
        Host host = populatedHost();
        DeviceSource source = source();
        Discovery first = source.discover(host.forScan());
        Discovery second = source.discover(host.forScan());

        assertEquals(Set.copyOf(first.devices()), Set.copyOf(second.devices()));
        assertEquals(Set.copyOf(first.skipped()), Set.copyOf(second.skipped()));
    }

    /** A host root that does not exist: an IOException or nothing. */
    @Test
    public void aMissingRootIsAnIOExceptionOrNothing() {
        expectIOExceptionOrNothing(Host.of(tempDir.resolve("missing")));
    }

    /** A host root that is a plain file: an IOException or nothing. */
    @Test
    public void aRootThatIsAPlainFileIsAnIOExceptionOrNothing() throws IOException {
        expectIOExceptionOrNothing(Host.of(Files.writeString(tempDir.resolve("file"), "not a directory\n")));
    }

    /** An empty host root: an IOException or nothing. */
    @Test
    public void anEmptyRootIsAnIOExceptionOrNothing() throws IOException {
        expectIOExceptionOrNothing(Host.of(Files.createDirectories(tempDir.resolve("empty"))));
    }

    /** Every device found rechecks as unchanged while the host is unchanged. */
    @Test
    public void everyDeviceIsUnchangedOnAnUnchangedHost() throws IOException {
        Host host = populatedHost();
        DeviceSource source = source();
        for (Device device : source.discover(host).devices()) {
            assertEquals(DeviceCheck.same(), source.recheck(host, device), "recheck of " + device.id());
        }
    }

    /** After the host is emptied, recheck answers (changed or not) for every device instead of throwing. */
    @Test
    public void recheckOnAnEmptiedHostAnswersWithoutThrowing() throws IOException {
        Host host = populatedHost();
        DeviceSource source = source();
        List<Device> devices = source.discover(host).devices();
        SysfsTree.deleteRecursively(host.root());
        Files.createDirectories(host.root());
        for (Device device : devices) {
            try {
                DeviceCheck check = source.recheck(host, device);
                if (check == null) {
                    fail("recheck of " + device.id() + " answered null");
                }
            } catch (RuntimeException e) {
                fail("recheck of " + device.id() + " threw " + e, e);
            }
        }
    }

    private Host populatedHost() {
        SysfsTree tree = SysfsTree.at(tempDir.resolve("host"));
        populate(tree);
        return tree.host();
    }

    private void expectIOExceptionOrNothing(Host host) {
        try {
            Discovery found = source().discover(host);
            assertTrue(found.devices().isEmpty(), "devices found on a host without any: " + found.devices());
        } catch (IOException expected) {
            // the other allowed answer
        } catch (RuntimeException e) {
            fail("discover threw " + e + " instead of an IOException or nothing", e);
        }
    }
}
