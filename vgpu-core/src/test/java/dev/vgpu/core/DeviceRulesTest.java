package dev.vgpu.core;

import static dev.vgpu.core.TestDevices.bdf;
import static dev.vgpu.core.TestDevices.mdev;
import static dev.vgpu.core.TestDevices.name;
import static dev.vgpu.core.TestDevices.pci;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.spi.Discovery;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Renames and exclusions as plain values, applied to one source's discovery. */
class DeviceRulesTest {

    private static final Device WHOLE_H100 = pci("0000:41:00.0", "GH100_H100_PCIE", "passthrough").build();
    private static final Device WHOLE_L40S = pci("0000:c1:00.0", "AD102GL_L40S", "passthrough").build();
    private static final Device VF_1Q = pci("0000:1b:00.4", "NVIDIA_L40S-1Q", "vendor-vfio")
            .parent(bdf("0000:1b:00.0")).build();
    private static final Device VF_2Q = pci("0000:1b:00.5", "NVIDIA_L40S-2Q", "vendor-vfio")
            .parent(bdf("0000:1b:00.0")).build();
    private static final Device MDEV = mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "NVIDIA_A10-8Q", "mdev")
            .parent(bdf("0000:06:00.0")).build();
    /** The device ids a host would show: the VFs' own, the mdev parent's. */
    private static final Map<String, String> IDS = Map.of("0000:41:00.0", "2331", "0000:c1:00.0", "26b9",
            "0000:1b:00.4", "26b9", "0000:1b:00.5", "26b9", MDEV.id(), "2236");
    private static final Function<Device, Optional<String>> DEVICE_IDS = d -> Optional.ofNullable(IDS.get(d.id()));

    private static DeviceMatch match(String source, String deviceId, String profile, String address) {
        return new DeviceMatch(Optional.ofNullable(source), Optional.ofNullable(deviceId), Optional.ofNullable(profile),
                Optional.ofNullable(address));
    }

    @ParameterizedTest(name = "{0} {1} {2} {3} matches {4}")
    @CsvSource(nullValues = "-", value = {
        "passthrough, -,    -,               -,                                    0000:41:00.0 0000:c1:00.0",
        "-,           26b9, -,               -,                                    0000:c1:00.0 0000:1b:00.4 0000:1b:00.5",
        "-,           2236, -,               -,                                    aa618089-8b16-4d01-a136-25a0f3c73123",
        "-,           26B9, NVIDIA L40S-1Q,  -,                                    0000:1b:00.4",
        "-,           -,    NVIDIA_L40S-1Q,  -,                                    0000:1b:00.4",
        "-,           -,    NVIDIA A10-8Q,   -,                                    aa618089-8b16-4d01-a136-25a0f3c73123",
        "-,           -,    AD102GL L40S,    -,                                    ''",
        "-,           -,    -,               0000:1B:00.5,                         0000:1b:00.5",
        "-,           -,    -,               AA618089-8B16-4D01-A136-25A0F3C73123, aa618089-8b16-4d01-a136-25a0f3c73123",
        "mdev,        2331, -,               -,                                    ''",
        "vendor-vfio, 26b9, NVIDIA L40S-2Q,  0000:1b:00.5,                         0000:1b:00.5",
    })
    void everyGivenFieldMustMatch(String source, String deviceId, String profile, String address, String ids) {
        DeviceMatch m = match(source, deviceId, profile, address);
        List<String> matched = new ArrayList<>();
        for (Device d : List.of(WHOLE_H100, WHOLE_L40S, VF_1Q, VF_2Q, MDEV)) {
            if (m.matches(d, DEVICE_IDS)) {
                matched.add(d.id());
            }
        }
        assertThat(String.join(" ", matched)).isEqualTo(ids);
    }

    @ParameterizedTest
    @CsvSource(nullValues = "-", delimiter = '|', value = {
        "-           | -     | -   | -            | at least one of source, deviceId, profile, address",
        "-           | 23311 | -   | -            | deviceId \"23311\" is not 4 hex digits",
        "-           | 0x23  | -   | -            | deviceId \"0x23\" is not 4 hex digits",
        "-           | -     | ' ' | -            | profile \" \" names no profile",
        "-           | -     | -   | 0000:1b:00   | address \"0000:1b:00\" is neither a PCI address",
        "' pass'     | -     | -   | -            | source \" pass\" is not a source name",
    })
    void invalidMatchesAreRefusedSayingWhy(String source, String deviceId, String profile, String address,
                                           String message) {
        assertThatThrownBy(() -> match(source, deviceId, profile, address))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void theFirstMatchingRuleWinsAndSeveralRulesMayShareOneName() {
        DeviceRules rules = new DeviceRules(List.of(
                new RenameRule(DeviceMatch.address("0000:c1:00.0"), name("l40s-reserved")),
                new RenameRule(DeviceMatch.deviceId("2331"), name("pgpu")),
                new RenameRule(DeviceMatch.source("passthrough"), name("pgpu")),
                new RenameRule(DeviceMatch.source("passthrough"), name("never-reached"))), List.of());

        Discovery out = rules.apply(new Discovery(List.of(WHOLE_H100, WHOLE_L40S), List.of()), DEVICE_IDS);

        assertThat(out.devices()).containsExactly(WHOLE_H100.withResource(name("pgpu")),
                WHOLE_L40S.withResource(name("l40s-reserved")));
    }

    @Test
    void aGenericNameGathersEveryPassthroughGpuIntoOneResource() {
        DeviceRules rules = new DeviceRules(List.of(new RenameRule(DeviceMatch.source("passthrough"), name("pgpu"))),
                List.of());
        Snapshot snapshot = Snapshot.builder()
                .add("passthrough", rules.apply(new Discovery(List.of(WHOLE_H100, WHOLE_L40S), List.of()), DEVICE_IDS))
                .add("vendor-vfio", rules.apply(new Discovery(List.of(VF_1Q, VF_2Q), List.of()), DEVICE_IDS))
                .build();

        assertThat(snapshot.resources().keySet()).containsExactly(name("NVIDIA_L40S-1Q"), name("NVIDIA_L40S-2Q"),
                name("pgpu"));
        assertThat(snapshot.resource(name("pgpu")).orElseThrow().ids()).containsExactly("0000:41:00.0",
                "0000:c1:00.0");
        assertThat(name("pgpu").envVar(Attachment.VFIO_PCI)).isEqualTo("PCI_RESOURCE_NVIDIA_COM_PGPU");
        assertThat(name("pgpu").socketFileName(75)).contains("kubevirt-pgpu.sock");
    }

    @Test
    void excludedDevicesAreSkipsWithTheReasonAndWinOverRenames() {
        Skipped earlier = new Skipped("0000:1b:00.6", "vendor-vfio", "unconfigured");
        DeviceRules rules = new DeviceRules(List.of(new RenameRule(DeviceMatch.source("vendor-vfio"), name("vgpu"))),
                List.of(DeviceMatch.profile("NVIDIA L40S-2Q")));

        Discovery out = rules.apply(new Discovery(List.of(VF_1Q, VF_2Q), List.of(earlier), 7), DEVICE_IDS);

        assertThat(out.devices()).containsExactly(VF_1Q.withResource(name("vgpu")));
        assertThat(out.skipped()).containsExactly(earlier,
                new Skipped("0000:1b:00.5", "vendor-vfio", "excluded by the configuration"));
        assertThat(out.unlistedSkips()).isEqualTo(7);
    }

    @Test
    void aDeviceWhoseIdCannotBeReadMatchesNoDeviceIdRule() {
        DeviceRules rules = new DeviceRules(List.of(), List.of(DeviceMatch.deviceId("2331")));
        Discovery in = new Discovery(List.of(WHOLE_H100), List.of());

        assertThat(rules.apply(in, d -> Optional.empty()).devices()).containsExactly(WHOLE_H100);
        assertThat(rules.apply(in, DEVICE_IDS).devices()).isEmpty();
    }

    @Test
    void noRulesChangeNothingAndAskNothing() {
        Discovery in = new Discovery(List.of(WHOLE_H100, MDEV), List.of());
        assertThat(DeviceRules.none().apply(in, d -> {
            throw new AssertionError("asked for a device id");
        })).isSameAs(in);
    }
}
