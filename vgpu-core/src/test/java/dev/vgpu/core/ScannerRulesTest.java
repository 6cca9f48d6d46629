package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ScannerAndRescanLoopTest.ScriptedSource;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.Scanner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.testsupport.CapturedStderr;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scanner applies the rules in force at the start of each scan to every source, custom ones included. */
class ScannerRulesTest {

    @TempDir
    Path root;

    private static DeviceRules renameDeviceId(String deviceId, String to) {
        return new DeviceRules(List.of(new RenameRule(DeviceMatch.deviceId(deviceId), new ResourceName(to))), List.of());
    }

    @Test
    void aRuleOnADeviceIdReadsItFromSysfsAndANewRuleAppliesFromTheNextScan() throws IOException {
        Path dir = Files.createDirectories(root.resolve("sys/bus/pci/devices/0000:41:00.0"));
        Files.writeString(dir.resolve("device"), "0x2331\n");
        ScriptedSource custom = new ScriptedSource("lab");
        custom.ids.set(List.of("0000:41:00.0@LAB_GPU", "0000:42:00.0@LAB_GPU"));
        AtomicReference<DeviceRules> rules = new AtomicReference<>(renameDeviceId("2331", "pgpu"));
        AtomicInteger asked = new AtomicInteger();
        Scanner scanner = new Scanner(Host.of(root), List.of(custom), () -> {
            asked.incrementAndGet();
            return rules.get();
        });

        Snapshot first = scanner.scan(Snapshot.empty());
        assertThat(asked).as("once per scan").hasValue(1);
        assertThat(first.resource(new ResourceName("pgpu")).orElseThrow().ids()).containsExactly("0000:41:00.0");
        assertThat(first.resource(new ResourceName("LAB_GPU")).orElseThrow().ids())
                .as("no device file: no device id, no match").containsExactly("0000:42:00.0");

        rules.set(new DeviceRules(List.of(), List.of(DeviceMatch.address("0000:42:00.0"))));
        Snapshot second = scanner.scan(first);
        assertThat(second.resources().keySet()).containsExactly(new ResourceName("LAB_GPU"));
        assertThat(second.skipped()).containsExactly(new Skipped("0000:42:00.0", "lab", DeviceRules.EXCLUDED));

        // The device that lost its rename leaves nvidia.com/pgpu and joins nvidia.com/LAB_GPU.
        assertThat(Reconciler.plan(first, second).changes()).extracting(c -> c.getClass().getSimpleName() + " "
                + c.resource()).containsExactlyInAnyOrder("Update nvidia.com/LAB_GPU", "Remove nvidia.com/pgpu");
    }

    @Test
    void aRenameOntoAnotherSourcesNameIsASkipAndAFailingSourceKeepsWhatItHad() {
        ScriptedSource a = new ScriptedSource("a");
        ScriptedSource b = new ScriptedSource("b");
        a.ids.set(List.of("0000:41:00.0@A_GPU"));
        b.ids.set(List.of("0000:42:00.0@B_GPU"));
        DeviceRules rules = new DeviceRules(List.of(new RenameRule(DeviceMatch.source("b"), new ResourceName("A_GPU"))),
                List.of());
        Scanner scanner = new Scanner(Host.of(root), List.of(a, b), () -> rules);

        Snapshot first = scanner.scan(Snapshot.empty());
        assertThat(first.resources().keySet()).containsExactly(new ResourceName("A_GPU"));
        assertThat(first.skipped()).singleElement().satisfies(s -> assertThat(s.reason())
                .contains("resource nvidia.com/A_GPU is already produced by source a"));

        a.failure.set(new IllegalStateException("boom"));
        assertThat(scanner.scan(first).resources()).isEqualTo(first.resources());
    }

    /** docs/RELIABILITY.md, "DRA mode": a rename that merges devices keeps every one of them where names are labels. */
    @Test
    @Tag("reliability")
    void aRenameOfEveryDeviceToOneNameKeepsThemAllWhereNamesAreAttributesAndSaysSoOnce() {
        ScriptedSource pass = new ScriptedSource("passthrough");
        ScriptedSource vfio = new ScriptedSource("vendor-vfio");
        pass.ids.set(List.of("0000:41:00.0@GPU"));
        vfio.ids.set(List.of("0000:1b:00.4@L40S_1Q", "0000:1b:00.5@L40S_1Q"));
        DeviceSource mdev = new DeviceSource() {
            @Override
            public String name() {
                return "mdev";
            }

            @Override
            public Discovery discover(Host host) {
                return Discovery.builder().add(Device.builder("aa618089-8b16-4d01-a136-25a0f3c73123",
                        new ResourceName("T4_1Q"), "mdev", Attachment.MEDIATED).iommuGroup("7").build()).build();
            }
        };
        ResourceName all = new ResourceName("ALL");
        DeviceRules rules = new DeviceRules(List.of(new RenameRule(DeviceMatch.source("passthrough"), all),
                new RenameRule(DeviceMatch.source("vendor-vfio"), all), new RenameRule(DeviceMatch.source("mdev"),
                all)), List.of());

        // The device plugin's rule: one socket per name, so 3 of 4 devices are skips (what DRA mode did before).
        Snapshot sockets = new Scanner(Host.of(root), List.of(pass, vfio, mdev), () -> rules).scan(Snapshot.empty());
        assertThat(sockets.deviceCount()).isEqualTo(1);
        assertThat(sockets.skipped()).hasSize(3);

        Scanner dra = new Scanner(Host.of(root), List.of(pass, vfio, mdev), () -> rules).withNamesAsAttributes();
        CapturedStderr.Outcome<Snapshot> first = CapturedStderr.withAnswer(() -> dra.scan(Snapshot.empty()));
        assertThat(first.answer().deviceCount()).isEqualTo(4);
        assertThat(first.answer().skipped()).isEmpty();
        assertThat(first.answer().resource(all).orElseThrow().ids()).containsExactly("0000:41:00.0");
        assertThat(first.answer().resource(new ResourceName("L40S_1Q")).orElseThrow().ids())
                .containsExactly("0000:1b:00.4", "0000:1b:00.5");
        assertThat(first.log().lines().filter(l -> l.contains("WARN") && l.contains("keeps its source's name")))
                .hasSize(3);
        // Said once, not at every rescan.
        String again = CapturedStderr.of(() -> dra.scan(first.answer()));
        assertThat(again).doesNotContain("keeps its source's name");
    }
}
