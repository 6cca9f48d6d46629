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
}
