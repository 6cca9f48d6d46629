package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Registration fields, the first list and updates on the stream, and retiring a resource. */
class RegistrationAndStreamTest {

    @TempDir
    Path tmp;

    @Test
    void registersEachResourceWithTheKubeletsFieldsAndServesItsSocket() {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(41).addGroupNode(71);
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 71, 1)));

            h.await(k -> k.resources().size() == 2);
            assertThat(h.kubelet.registrations()).containsExactlyInAnyOrder(
                    new Registration("v1beta1", "kubevirt-GH100_H200_SXM_141GB.sock", "nvidia.com/GH100_H200_SXM_141GB",
                            false, true),
                    new Registration("v1beta1", "kubevirt-NVIDIA_L40S-1Q.sock", "nvidia.com/NVIDIA_L40S-1Q", false,
                            true));
            assertThat(h.kubelet.options("nvidia.com/NVIDIA_L40S-1Q")).hasValueSatisfying(o -> {
                assertThat(o.getGetPreferredAllocationAvailable()).isTrue();
                assertThat(o.getPreStartRequired()).isFalse();
            });
            assertThat(h.pluginDir.resolve("kubevirt-GH100_H200_SXM_141GB.sock")).exists();
            assertThat(h.pluginDir.resolve("kubevirt-NVIDIA_L40S-1Q.sock")).exists();
            assertThat(h.manager.running()).containsExactly(H200, L40S_1Q);
        }
    }

    @Test
    void firstListCarriesHealthAndNoNumaNodeForAnyDeviceWhenOneLacksIt() {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(1).create();
            h.host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(0).create();
            var unknownNuma = dev.vgpu.core.Device.builder("0000:42:00.0", H200, "passthrough",
                    dev.vgpu.core.Attachment.VFIO_PCI).iommuGroup("42").numaNode(-1).build();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 1), unknownNuma));

            h.await(k -> k.resources().containsKey(H200.fullName()));
            assertThat(h.kubelet.resources().get(H200.fullName())).containsExactly(
                    new DeviceState("0000:41:00.0", "Healthy", OptionalInt.empty()),
                    new DeviceState("0000:42:00.0", "Healthy", OptionalInt.empty()));
        }
    }

    @Test
    void updateSendsTheNewListKeepingHealthOfDevicesThatStay() {
        try (Harness h = Harness.start(tmp)) {
            h.host.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).create();
            h.host.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).numa(0).withoutGroupNode().create();
            h.host.passthroughGpu("0000:43:00.0", 0x2335).iommuGroup(43).numa(0).create();
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 0)));
            h.await(k -> k.resources().containsKey(H200.fullName()));
            assertThat(h.kubelet.resources().get(H200.fullName())).extracting(DeviceState::health)
                    .containsExactly("Healthy", "Unhealthy");

            h.apply(snapshot(passthrough("0000:42:00.0", 42, 0), passthrough("0000:43:00.0", 43, 0)));

            h.await(k -> k.resources().get(H200.fullName()).stream().anyMatch(d -> d.id().equals("0000:43:00.0")));
            assertThat(h.kubelet.resources().get(H200.fullName())).containsExactly(
                    new DeviceState("0000:42:00.0", "Unhealthy", OptionalInt.of(0)),
                    new DeviceState("0000:43:00.0", "Healthy", OptionalInt.of(0)));
        }
    }

    @Test
    void removeSendsAnEmptyListThenEndsTheStreamAndDeletesTheSocket() {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(71);
            h.apply(snapshot(vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 71, 0)));
            h.await(k -> k.resources().containsKey(L40S_1Q.fullName()) && k.streaming(L40S_1Q.fullName()));
            int before = h.kubelet.listUpdates(L40S_1Q.fullName());

            h.apply(snapshot(List.of()));

            h.await(k -> !k.streaming(L40S_1Q.fullName()));
            assertThat(h.kubelet.resources().get(L40S_1Q.fullName())).isEmpty();
            assertThat(h.kubelet.listUpdates(L40S_1Q.fullName())).isEqualTo(before + 1);
            assertThat(Files.exists(h.pluginDir.resolve("kubevirt-NVIDIA_L40S-1Q.sock"))).isFalse();
            assertThat(h.manager.running()).isEmpty();
        }
    }

    @Test
    void aPlanTouchingOnlyVgpuResourcesSendsNothingOnThePassthroughStream() {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(41).addGroupNode(71).addGroupNode(72);
            var gpu = passthrough("0000:41:00.0", 41, 0);
            h.apply(snapshot(gpu, vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 71, 0)));
            h.await(k -> k.resources().size() == 2);
            int passthroughBefore = h.kubelet.listUpdates(H200.fullName());
            int vgpuBefore = h.kubelet.listUpdates(L40S_1Q.fullName());
            AdvertisedDevices advertisedBefore = h.manager.plugin(H200).advertised();

            h.apply(snapshot(gpu, vf(L40S_1Q, "0000:1b:00.4", "0000:1b:00.0", 71, 0),
                    vf(L40S_1Q, "0000:1b:00.5", "0000:1b:00.0", 72, 0)));

            h.await(k -> k.listUpdates(L40S_1Q.fullName()) == vgpuBefore + 1);
            assertThat(h.manager.plugin(H200).advertised()).isSameAs(advertisedBefore);
            assertThat(h.kubelet.listUpdates(H200.fullName())).isEqualTo(passthroughBefore);
            assertThat(h.kubelet.streaming(H200.fullName())).isTrue();
        }
    }
}
