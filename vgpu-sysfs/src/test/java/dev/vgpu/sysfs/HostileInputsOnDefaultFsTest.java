package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.Discovery;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link HostileInputsContract} on the default file system under a temporary directory, plus what only a real
 * file system can hold: FIFOs and device nodes where an attribute is expected. Opening a FIFO blocks until a
 * writer comes, so these tests carry a {@link Timeout} as a hang guard: a hang fails instead of stalling the build.
 */
class HostileInputsOnDefaultFsTest extends HostileInputsContract {

    static final String UUID = PassthroughAndMdevContract.UUID1;

    @Override
    Path newRoot() {
        return tempDir;
    }

    /** Replaces a file of the tree by a FIFO that nobody ever writes. */
    void fifoAt(String relative) throws IOException, InterruptedException {
        Path path = tree.path(relative);
        Files.deleteIfExists(path);
        Files.createDirectories(path.getParent());
        Process mkfifo = new ProcessBuilder("mkfifo", path.toString()).redirectErrorStream(true).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).as("mkfifo finished").isTrue();
        assertThat(mkfifo.exitValue()).as("mkfifo %s", path).isZero();
    }

    @ParameterizedTest(name = "a FIFO at {0} is a skip")
    @ValueSource(strings = {"nvidia/current_vgpu_type", "vendor"})
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fifoWhereAVfAttributeBelongsIsASkipNamingIt(String attribute) throws Exception {
        oneConfiguredVf();
        fifoAt("sys/bus/pci/devices/" + VF + "/" + attribute);

        Discovery found = scan(VENDOR);

        assertThat(skips(found)).containsOnlyKeys(VF).hasEntrySatisfying(VF, reason -> assertThat(reason)
                .contains(attribute.substring(attribute.indexOf('/') + 1) + " is a FIFO, not a regular file"));
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fifoAsACatalogHidesOnlyThatCatalog() throws Exception {
        oneConfiguredVf();
        fifoAt("sys/bus/pci/devices/" + VF + "/nvidia/creatable_vgpu_types");

        assertThat(resources(scan(VENDOR))).containsOnlyKeys("NVIDIA_H200X-141C");
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fifoAsEveryCatalogOfTheCardIsASkipSayingWhy() throws Exception {
        oneConfiguredVf();
        for (String function : new String[] {"0000:1b:00.0", VF, "0000:1b:00.5"}) {
            fifoAt("sys/bus/pci/devices/" + function + "/nvidia/creatable_vgpu_types");
        }

        assertThat(skips(scan(VENDOR))).containsOnlyKeys(VF).hasEntrySatisfying(VF,
                reason -> assertThat(reason).contains("1428"));
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fifoAsNumaNodeIsASkipNamingIt() throws Exception {
        oneGpu();
        fifoAt("sys/bus/pci/devices/" + GPU + "/numa_node");

        assertThat(skips(scan(PASSTHROUGH))).containsOnlyKeys(GPU).hasEntrySatisfying(GPU,
                reason -> assertThat(reason).contains("numa_node", "FIFO"));
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fifoAsAnMdevTypeNameIsASkipNamingIt() throws Exception {
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev(UUID, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        fifoAt("sys/bus/pci/devices/0000:06:00.0/mdev_supported_types/nvidia-558/name");

        assertThat(skips(scan(MDEV))).containsOnlyKeys(UUID).hasEntrySatisfying(UUID,
                reason -> assertThat(reason).contains("name", "FIFO"));
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void deviceNodeAsVendorIsASkipAndARecheckSaysUnreadable() throws Exception {
        oneGpu();
        Device advertised = scan(PASSTHROUGH).devices().get(0);
        Path vendor = tree.path("sys/bus/pci/devices/" + GPU + "/vendor");
        Files.delete(vendor);
        Files.createSymbolicLink(vendor, Path.of("/dev/zero"));

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("vendor", "character device");
        DeviceCheck check = PASSTHROUGH.recheck(host(), advertised);
        assertThat(check.unchanged()).isFalse();
        assertThat(check.describe(GPU)).contains("unreadable", "character device");
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fifoAtCurrentTypeMakesTheRecheckSayUnreadable() throws Exception {
        oneConfiguredVf();
        Device advertised = scan(VENDOR).devices().get(0);
        fifoAt("sys/bus/pci/devices/" + VF + "/nvidia/current_vgpu_type");

        assertThat(VENDOR.recheck(host(), advertised).describe(VF)).contains("unreadable", "FIFO");
    }

    @Test
    @Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void symlinkLoopAsAnAttributeIsASkip() throws Exception {
        oneGpu();
        Path device = tree.path("sys/bus/pci/devices/" + GPU + "/device");
        Files.delete(device);
        Files.createSymbolicLink(device, Path.of("device"));

        assertThat(skips(scan(PASSTHROUGH)).get(GPU)).contains("device");
        assertThat(Map.copyOf(resources(scan(PASSTHROUGH)))).isEmpty();
    }
}
