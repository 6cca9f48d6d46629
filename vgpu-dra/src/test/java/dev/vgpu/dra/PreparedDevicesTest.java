package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The public, strict reader of which PCI functions prepared claims hold (the vGPU configurator's in-use check). */
class PreparedDevicesTest {

    @TempDir
    Path state;

    static PreparedDevice device(String name) {
        return new PreparedDevice(List.of("vgpu"), "node-1", name, List.of("gpu.vgpu.dev/claim=u"));
    }

    @Test
    void namesEveryPciFunctionOfEveryClaimAndLeavesMdevsOut() throws IOException {
        Checkpoint.save(state.resolve(PreparedDevices.FILE), List.of(
                new PreparedClaim(new ClaimRef("vms", "a", "u-1"), List.of(device("pci-0000-41-00-4"),
                        device("mdev-7f0e7a5e-5c1a-4a8e-9a55-0f2f2c4f9d11")), List.of()),
                new PreparedClaim(new ClaimRef("vms", "b", "u-2"), List.of(device("pci-10000-c1-1f-7")), List.of())));

        assertThat(PreparedDevices.pciAddresses(state)).containsExactlyInAnyOrder(PciAddress.parse("0000:41:00.4"),
                PciAddress.parse("10000:c1:1f.7"));
    }

    @Test
    void noCheckpointIsNothingHeld() throws IOException {
        assertThat(PreparedDevices.pciAddresses(state)).isEmpty();
    }

    @Test
    void aCheckpointThatIsThereButUnusableIsAnErrorNotAnEmptyAnswer() throws IOException {
        Files.writeString(state.resolve(PreparedDevices.FILE), "vgpu-dra-checkpoint\t1\nclaim\tvms\ta\n");

        assertThatThrownBy(() -> PreparedDevices.pciAddresses(state)).isInstanceOf(IOException.class)
                .hasMessageContaining("the prepared-claims checkpoint " + state.resolve(PreparedDevices.FILE)
                        + " is not usable: line 2 does not start a claim");

        Files.delete(state.resolve(PreparedDevices.FILE));
        Files.createSymbolicLink(state.resolve(PreparedDevices.FILE), Files.writeString(state.resolve("x"), ""));
        assertThatThrownBy(() -> PreparedDevices.pciAddresses(state)).hasMessageContaining("symbolic link");
    }

    @Test
    void aPciNameGivesItsAddressBack() {
        assertThat(DeviceNames.pciAddress("pci-0000-41-00-4")).contains(PciAddress.parse("0000:41:00.4"));
        assertThat(DeviceNames.pciAddress("pci-0000-41-00")).isEmpty();
        assertThat(DeviceNames.pciAddress("pci-0000-41-00-4-5")).isEmpty();
        assertThat(DeviceNames.pciAddress("pci-zzzz-41-00-4")).isEmpty();
        assertThat(DeviceNames.pciAddress("mdev-0000-41-00-4")).isEmpty();
    }
}
