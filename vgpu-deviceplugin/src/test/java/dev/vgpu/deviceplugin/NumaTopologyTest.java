package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.L40S_1Q;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One resource, one rule for topology (docs/HOST-FACTS.md trap 1): when any of its devices has no NUMA node, no
 * device of it carries topology in ListAndWatch, and the change is logged once each way.
 */
class NumaTopologyTest {

    private static final String PF = "0000:50:00.0";

    @TempDir
    Path tmp;

    @Test
    void aResourceWithOneDeviceWithoutNodeSendsNoTopologyForAny() {
        AdvertisedDevices mixed = advertise(vf("0000:51:00.0", 51, 0), vf("0000:52:00.0", 52, -1));

        assertThat(topologies(mixed.toResponse())).containsExactly(false, false);
        assertThat(mixed.withholdsTopology()).isTrue();
        assertThat(mixed.withoutNumaNodeWhenMixed()).containsExactly("0000:52:00.0");
        assertThat(mixed.devices()).extracting(Device::numaNode)
                .as("the devices keep their nodes").containsExactly(OptionalInt.of(0), OptionalInt.empty());
    }

    @Test
    void aResourceWhoseDevicesAllKnowTheirNodeSendsEach() {
        AdvertisedDevices known = advertise(vf("0000:51:00.0", 51, 0), vf("0000:52:00.0", 52, 1));

        ListAndWatchResponse response = known.toResponse();

        assertThat(response.getDevicesList()).extracting(d -> d.getTopology().getNodes(0).getID())
                .containsExactly(0L, 1L);
        assertThat(known.withholdsTopology()).isFalse();
        assertThat(known.withoutNumaNodeWhenMixed()).isEmpty();
    }

    @Test
    void aResourceWithoutAnyNodeIsNotMixed() {
        AdvertisedDevices none = advertise(vf("0000:51:00.0", 51, -1), vf("0000:52:00.0", 52, -1));

        assertThat(topologies(none.toResponse())).containsExactly(false, false);
        assertThat(none.withoutNumaNodeWhenMixed()).isEmpty();
        assertThat(AdvertisedDevices.none().withoutNumaNodeWhenMixed()).isEmpty();
    }

    @Test
    void updatesThatMakeItMixedAndThenNotFlipTheTopologyOnTheStreamAndLogOnceEachWay() {
        Device vf51 = vf("0000:51:00.0", 51, 0);
        Device vf52Known = vf("0000:52:00.0", 52, 1);
        Device vf52Unknown = vf("0000:52:00.0", 52, -1);
        Device vf53Unknown = vf("0000:53:00.0", 53, -1);
        String log;
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(51).addGroupNode(52).addGroupNode(53);
            log = CapturedStderr.of(() -> {
                h.apply(snapshot(vf51, vf52Known));
                h.await(k -> k.streaming(L40S_1Q.fullName()));
                assertThat(received(h)).containsExactly(node("0000:51:00.0", 0), node("0000:52:00.0", 1));

                h.apply(snapshot(vf51, vf52Unknown));
                h.await(k -> received(k).contains(noNode("0000:52:00.0")));
                assertThat(received(h)).containsExactly(noNode("0000:51:00.0"), noNode("0000:52:00.0"));

                // Still mixed, more devices without a node, and health changes: nothing more is logged.
                h.apply(snapshot(vf51, vf52Unknown, vf53Unknown));
                h.await(k -> received(k).size() == 3);
                h.host.removeGroupNode(53);
                h.await(k -> received(k).contains(new DeviceState("0000:53:00.0", "Unhealthy", OptionalInt.empty())));

                h.apply(snapshot(vf51, vf52Known));
                h.await(k -> received(k).equals(List.of(node("0000:51:00.0", 0), node("0000:52:00.0", 1))));
            });
        }

        assertThat(count(log, "nvidia.com/NVIDIA_L40S-1Q: no device carries NUMA topology, because 1 of its 2 "
                + "devices have no NUMA node (0000:52:00.0)")).as(log).isEqualTo(1);
        assertThat(count(log, "no device carries NUMA topology")).as(log).isEqualTo(1);
        assertThat(count(log, "nvidia.com/NVIDIA_L40S-1Q: its devices no longer mix known and unknown NUMA nodes; "
                + "each carries its NUMA node again")).as(log).isEqualTo(1);
    }

    @Test
    void aResourceThatStartsMixedSaysSoOnceAtStart() {
        String log;
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(51).addGroupNode(52);
            log = CapturedStderr.of(() -> {
                h.apply(snapshot(vf("0000:51:00.0", 51, 0), vf("0000:52:00.0", 52, -1)));
                h.await(k -> k.streaming(L40S_1Q.fullName()));
                assertThat(received(h)).containsExactly(noNode("0000:51:00.0"), noNode("0000:52:00.0"));
            });
        }

        assertThat(count(log, "no device carries NUMA topology, because 1 of its 2 devices have no NUMA node"))
                .as(log).isEqualTo(1);
    }

    @Test
    void theLoggedIdsAreBounded() {
        List<Device> devices = new java.util.ArrayList<>(List.of(vf("0000:4f:00.0", 40, 0)));
        for (int i = 0; i < 40; i++) {
            devices.add(vf(String.format("0000:5%d:00.%d", i / 8, i % 8), 60 + i, -1));
        }
        String log;
        try (Harness h = Harness.start(tmp)) {
            log = CapturedStderr.of(() -> {
                h.apply(snapshot(devices));
                h.await(k -> k.streaming(L40S_1Q.fullName()));
            });
        }

        String line = log.lines().filter(l -> l.contains("no device carries NUMA topology")).findFirst().orElseThrow();
        assertThat(line).contains("because 40 of its 41 devices", " more)").hasSizeLessThan(600);
    }

    private static List<DeviceState> received(Harness h) {
        return received(h.kubelet);
    }

    private static List<DeviceState> received(dev.vgpu.kubelet.standin.StandInKubelet kubelet) {
        return kubelet.resources().getOrDefault(L40S_1Q.fullName(), List.of());
    }

    private static DeviceState node(String id, int node) {
        return new DeviceState(id, "Healthy", OptionalInt.of(node));
    }

    private static DeviceState noNode(String id) {
        return new DeviceState(id, "Healthy", OptionalInt.empty());
    }

    private static Device vf(String bdf, int group, int numa) {
        return Device.builder(bdf, L40S_1Q, "vendor-vfio", Attachment.VFIO_PCI).parent(PciAddress.parse(PF))
                .iommuGroup(Integer.toString(group)).numaNode(numa).build();
    }

    private static AdvertisedDevices advertise(Device... devices) {
        return AdvertisedDevices.none().replace(List.of(devices), group -> true, d -> false);
    }

    private static List<Boolean> topologies(ListAndWatchResponse response) {
        return response.getDevicesList().stream().map(d -> d.hasTopology()).toList();
    }

    private static int count(String text, String part) {
        Matcher m = Pattern.compile(Pattern.quote(part)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
