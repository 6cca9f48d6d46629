package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Discovery;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every slice of a pool keeps the {@code resource.k8s.io/v1} rules of docs/DRA.md §4, checked here by rules written
 * apart from the model's own: device names, attribute names and values, limits, the pool's slice count; and the
 * contract's attributes for each kind of device.
 */
class ResourceSliceRulesTest {

    static final Pattern DNS_LABEL = Pattern.compile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
    static final Pattern C_IDENTIFIER = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");
    static final Pattern PCI_BUS_ID = Pattern.compile("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]$");

    @TempDir
    Path tmp;

    /** The rules of §4 a slice must keep, as the API server would validate them. */
    static void assertValid(List<SliceSpec> pool) {
        assertThat(pool).isNotEmpty();
        Set<String> names = new HashSet<>();
        for (SliceSpec slice : pool) {
            assertThat(slice.resourceSliceCount()).isEqualTo(pool.size());
            assertThat(slice.generation()).isEqualTo(pool.get(0).generation()).isPositive();
            assertThat(slice.pool()).hasSizeLessThanOrEqualTo(253).isEqualTo(slice.nodeName());
            assertThat(slice.devices()).hasSizeLessThanOrEqualTo(128);
            for (SliceDevice device : slice.devices()) {
                assertThat(names.add(device.name())).as("unique in the pool: " + device.name()).isTrue();
                assertThat(device.name()).hasSizeLessThanOrEqualTo(63).matches(DNS_LABEL);
                assertThat(device.attributes()).hasSizeLessThanOrEqualTo(32);
                device.attributes().forEach((name, value) -> {
                    int slash = name.indexOf('/');
                    String id = slash < 0 ? name : name.substring(slash + 1);
                    assertThat(id).hasSizeLessThanOrEqualTo(32).matches(C_IDENTIFIER);
                    if (slash >= 0) {
                        assertThat(name.substring(0, slash)).hasSizeLessThanOrEqualTo(63);
                    }
                    if (value instanceof DeviceAttribute.StringValue s) {
                        // The API server counts bytes (Go's len), not UTF-16 units.
                        assertThat(s.value().getBytes(java.nio.charset.StandardCharsets.UTF_8).length).as(name)
                                .isLessThanOrEqualTo(64);
                    }
                    assertThat(value.key()).isIn("int", "bool", "string", "version");
                });
            }
        }
    }

    private static Map<String, DeviceAttribute> attributes(List<SliceSpec> pool, String name) {
        return pool.stream().flatMap(s -> s.devices().stream()).filter(d -> d.name().equals(name)).findFirst()
                .orElseThrow().attributes();
    }

    private static DeviceAttribute.StringValue string(String value) {
        return new DeviceAttribute.StringValue(value);
    }

    @Test
    void theScannedNodeIsOneSliceWithTheContractsAttributesForEachKind() {
        try (DraHarness h = new DraHarness(tmp)) {
            List<SliceSpec> pool = ResourceSlices.of(DriverName.DEFAULT, "node-a", h.snapshot, 1);

            assertValid(pool);
            assertThat(pool).singleElement().satisfies(s -> assertThat(s.devices()).extracting(SliceDevice::name)
                    .containsExactly(DraHarness.MDEV, DraHarness.VF, DraHarness.VF2, DraHarness.GPU));
            Map<String, DeviceAttribute> vf = attributes(pool, DraHarness.VF);
            assertThat(vf).containsEntry("type", string("vgpu"))
                    .containsEntry("resource.kubernetes.io/pciBusID", string("0000:1b:00.4"))
                    .containsEntry("parentPciBusID", string("0000:1b:00.0"))
                    .containsEntry("iommuGroup", new DeviceAttribute.IntValue(100))
                    .containsEntry("resourceName", string("nvidia.com/NVIDIA_L40S-1Q"))
                    .containsEntry("profile", string("NVIDIA L40S-1Q"))
                    .containsEntry("deviceId", string("26b9"))
                    .containsEntry("vgpuTypeId", new DeviceAttribute.IntValue(1152))
                    .containsEntry("resource.kubernetes.io/pcieRoot", string("pci0000:10"))
                    .doesNotContainKeys("mdevUUID", "numaNode");
            assertThat(attributes(pool, DraHarness.GPU)).containsEntry("type", string("passthrough"))
                    .containsEntry("iommuGroup", new DeviceAttribute.IntValue(41))
                    .containsEntry("deviceId", string("2335"))
                    // No pci.ids in the harness: the profile of a passthrough GPU is then its device id.
                    .containsEntry("profile", string("2335"))
                    .containsEntry("resource.kubernetes.io/pcieRoot", string("pci0000:40"))
                    .doesNotContainKeys("parentPciBusID", "vgpuTypeId");
            Map<String, DeviceAttribute> mdev = attributes(pool, DraHarness.MDEV);
            assertThat(mdev).containsEntry("type", string("mdev")).containsEntry("mdevUUID", string(DraHarness.UUID))
                    .containsEntry("parentPciBusID", string("0000:06:00.0"))
                    .containsEntry("profile", string("GRID T4-1Q"))
                    .containsEntry("deviceId", string("1eb8"))
                    .doesNotContainKeys("resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot",
                            "vgpuTypeId");
            assertThat(((DeviceAttribute.StringValue) vf.get("resource.kubernetes.io/pciBusID")).value())
                    .matches(PCI_BUS_ID);
        }
    }

    @Test
    void threeHundredDevicesAreThreeSlicesOfAtMost128WithTheCountOnEach() {
        List<Device> devices = new ArrayList<>();
        ResourceName name = new ResourceName("NVIDIA_H200X-1-18C");
        for (int bus = 0; bus < 30; bus++) {
            for (int fn = 0; fn < 10; fn++) {
                devices.add(Device.builder(new PciAddress(0, 0x40 + bus, 1 + fn / 8, fn % 8).toString(), name, "vendor-vfio",
                        Attachment.VFIO_PCI).parent(new PciAddress(0, 0x40 + bus, 0, 0)).iommuGroup(
                        Integer.toString(bus * 10 + fn)).numaNode(bus % 2).build());
            }
        }
        Snapshot snapshot = Snapshot.builder().add("vendor-vfio", new Discovery(devices, List.of())).build();

        List<SliceSpec> pool = ResourceSlices.of(DriverName.DEFAULT, "node-a", snapshot, 7);

        assertValid(pool);
        assertThat(pool).extracting(s -> s.devices().size()).containsExactly(128, 128, 44);
        assertThat(pool).allSatisfy(s -> assertThat(s.generation()).isEqualTo(7));
        assertThat(attributes(pool, "pci-0000-41-01-3")).containsEntry("numaNode", new DeviceAttribute.IntValue(1));
    }

    /**
     * A vGPU profile of 40 characters but 80 bytes (a host whose names are in another script): the server would
     * refuse the whole slice (422), so that node would publish no device. It is left out of that device alone,
     * and said once per device and attribute.
     */
    @Test
    void aValueOfFewCharactersButMoreThan64BytesIsLeftOutOfItsDeviceAndReported() {
        String profile = "É".repeat(40); // 40 characters, 80 bytes of UTF-8
        Device wide = Device.builder("0000:1b:00.4", new ResourceName("WIDE-1Q"), "vendor-vfio", Attachment.VFIO_PCI)
                .parent(new PciAddress(0, 0x1b, 0, 0)).iommuGroup("100")
                .facts(dev.vgpu.core.DeviceFacts.NONE.withProfile(profile).withDeviceId("26b9")).build();
        Device plain = Device.builder("0000:1c:00.4", new ResourceName("NVIDIA_L40S-1Q"), "vendor-vfio",
                Attachment.VFIO_PCI).parent(new PciAddress(0, 0x1c, 0, 0)).iommuGroup("101")
                .facts(dev.vgpu.core.DeviceFacts.NONE.withProfile("NVIDIA L40S-1Q")).build();
        Snapshot snapshot = Snapshot.builder().add("vendor-vfio", new Discovery(List.of(wide, plain), List.of()))
                .build();
        List<ResourceSlices.Omission> omitted = new ArrayList<>();

        List<List<SliceDevice>> parts = ResourceSlices.devices(DriverName.DEFAULT, snapshot, Set.of(), omitted::add);

        List<SliceSpec> pool = List.of(new SliceSpec(DriverName.DEFAULT, "node-a", 1, 1, "node-a", parts.get(0)));
        assertValid(pool);
        assertThat(attributes(pool, "pci-0000-1b-00-4")).doesNotContainKey("profile")
                .containsEntry("deviceId", string("26b9")).containsKey("resourceName");
        assertThat(attributes(pool, "pci-0000-1c-00-4")).containsEntry("profile", string("NVIDIA L40S-1Q"));
        assertThat(omitted).containsExactly(new ResourceSlices.Omission("pci-0000-1b-00-4", "profile", 80));
        assertThat(omitted.get(0).describe()).contains("profile", "pci-0000-1b-00-4", "80 bytes", "at most 64");
    }

    @Test
    void anEmptyNodeIsOneEmptySlice() {
        assertThat(ResourceSlices.of(DriverName.DEFAULT, "node-a", Snapshot.empty(), 1))
                .singleElement().satisfies(s -> assertThat(s.devices()).isEmpty());
    }

    @Test
    void theModelRefusesWhatTheApiServerWould() {
        assertThatThrownBy(() -> new SliceDevice("0000:1b:00.4", Map.of())).hasMessageContaining("DNS label");
        assertThatThrownBy(() -> new SliceDevice("pci-x", Map.of("bad-name", string("x"))))
                .hasMessageContaining("bad attribute name");
        assertThatThrownBy(() -> new SliceDevice("pci-x", Map.of("resource.kubernetes.io/" + "a".repeat(33),
                string("x")))).hasMessageContaining("bad attribute name");
        assertThatThrownBy(() -> string("x".repeat(65))).hasMessageContaining("64");
        assertThatThrownBy(() -> string("\u00e9".repeat(33))).hasMessageContaining("66");
        List<SliceDevice> many = new ArrayList<>();
        for (int i = 0; i < 129; i++) {
            many.add(new SliceDevice("d" + i, Map.of()));
        }
        assertThatThrownBy(() -> new SliceSpec(DriverName.DEFAULT, "n", 1, 1, "n", many))
                .hasMessageContaining("at most 128");
    }
}
