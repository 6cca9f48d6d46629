package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SimulatedCard;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testing.VgpuManagerSimulator;
import dev.vgpu.testing.VgpuManagerSimulator.WriteFault;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code configure} and {@code serve --vgpu-config} through the packaged jar, on a two-card host the vGPU-manager
 * simulator keeps (its state file lets the daemon's process and the test share it): a layout applied from nothing and
 * then nothing written; a VF the kubelet allocated left alone; the layout restored after a reboot before the kubelet's
 * first list; mistakes in the file refused naming card and profile; a failed write rolled back.
 */
class ConfigureEndToEndIT {

    static final String A = "0000:41:00.0";
    static final String B = "0000:81:00.0";
    static final String A0 = SysfsTree.vfAddress(A, 0);
    static final String B0 = SysfsTree.vfAddress(B, 0);
    static final long Q12 = 1153;
    static final long Q24 = 1155;
    static final String LAYOUTS = """
            version: v1
            vgpu-configs:
              default:
                - devices: [0]
                  vgpu-devices: {"L40S-12Q": 4}
                - devices: [1]
                  device-filter: "0x26B910DE"
                  vgpu-devices: {"NVIDIA L40S-24Q": 2}
              halves:
                - devices: all
                  vgpu-devices: {"L40S-24Q": 2}
              mixed:
                - devices: [0]
                  vgpu-devices: {"L40S-12Q": 1, "L40S-24Q": 1}
                - devices: [1]
                  vgpu-devices: {"L40S-99Q": 1}
            """;

    @TempDir
    Path tmp;
    Path root;
    Path plugins;
    Path state;
    Path layouts;
    Path pciIds;
    VgpuManagerSimulator simulator;

    /** Two L40S cards with 4 VFs each, none enabled: the host after a reboot that dropped the VFs. */
    @BeforeEach
    void host() throws Exception {
        root = Files.createDirectories(tmp.resolve("host"));
        plugins = Files.createDirectories(tmp.resolve("device-plugins"));
        state = tmp.resolve("state");
        layouts = Files.writeString(tmp.resolve("layouts.yaml"), LAYOUTS);
        pciIds = Files.createFile(tmp.resolve("empty-pci.ids"));
        simulator = VgpuManagerSimulator.create(SysfsTree.at(root),
                SimulatedCard.l40s(A).withTotalVfs(4).withEnabledVfs(0),
                SimulatedCard.l40s(B).withTotalVfs(4).withEnabledVfs(0));
    }

    record Run(int code, String out, String err) {
    }

    /** {@code java -jar vgpu-daemon.jar configure ...} on the simulated host; waits for its exit. */
    Run configure(String select, String... more) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", DaemonProcess.jar().toString(),
                "configure", "--vgpu-config", layouts.toString(), "--select", select, "--host-root", root.toString(),
                "--simulated-host", "--device-plugin-dir", plugins.toString(), "--state-dir", state.toString(),
                "--no-nvml"));
        command.addAll(List.of(more));
        Path out = tmp.resolve("configure-" + select + ".out");
        Path err = tmp.resolve("configure-" + select + ".err");
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("configure finished").isTrue();
            return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            process.destroyForcibly();
        }
    }

    static Map<String, Long> holding(long type, String... vfs) {
        Map<String, Long> expected = new TreeMap<>();
        for (String vf : vfs) {
            expected.put(vf, type);
        }
        return expected;
    }

    Map<String, Long> fullA() {
        return holding(Q12, A0, SysfsTree.vfAddress(A, 1), SysfsTree.vfAddress(A, 2), SysfsTree.vfAddress(A, 3));
    }

    Map<String, Long> halfB() {
        Map<String, Long> b = holding(Q24, B0, SysfsTree.vfAddress(B, 1));
        b.put(SysfsTree.vfAddress(B, 2), 0L);
        b.put(SysfsTree.vfAddress(B, 3), 0L);
        return b;
    }

    @Test
    void aLayoutIsAppliedFromNothingAndTheSameCommandAgainWritesNothing() throws Exception {
        Run plan = configure("default", "--dry-run");
        assertThat(plan.code()).as(plan.out() + plan.err()).isZero();
        assertThat(plan.out()).contains("GPU 0 (" + A + ", vgpu-configs.default[0]): now no VFs enabled; to hold 4 ×"
                + " \"L40S-12Q\":", "  enable 4 VFs on card " + A, "  then read card " + A + " again");
        assertThat(simulator.writeAttempts()).as("a dry run writes nothing").isZero();

        Run first = configure("default");

        assertThat(first.code()).as(first.out() + first.err()).isZero();
        assertThat(simulator.vgpus(A)).isEqualTo(fullA());
        assertThat(simulator.vgpus(B)).isEqualTo(halfB());
        assertThat(first.out()).contains("GPU 0 (" + A + ", vgpu-configs.default[0]): card " + A + ": applied in",
                "GPU 1 (" + B + ", vgpu-configs.default[1]): card " + B + ": applied in", "the host holds the layout");
        long writes = simulator.writeAttempts();

        // Both cards are full now (their catalogs list nothing): the names kept in --state-dir name their types.
        Run second = configure("default");

        assertThat(second.code()).as(second.out() + second.err()).isZero();
        assertThat(second.out()).contains("card " + A + ": already as asked, nothing written",
                "card " + B + ": already as asked, nothing written", "the host holds the layout (0 writes)");
        assertThat(simulator.writeAttempts()).isEqualTo(writes);

        Run check = configure("default", "--assert");
        assertThat(check.code()).as(check.out()).isZero();
        Run differs = configure("halves", "--assert");
        assertThat(differs.code()).as(differs.out()).isEqualTo(1);
        assertThat(differs.out()).contains("the host differs from the layout");
        // A full card lists no types; the names kept name only the types its VFs hold, so another profile on it
        // cannot be told from none (NVML would name it): that card is refused, and said so.
        Run dry = configure("halves", "--dry-run");
        assertThat(dry.code()).as(dry.out() + dry.err()).isEqualTo(1);
        assertThat(dry.out()).contains("GPU 0 (" + A + ", vgpu-configs.halves[0]): would be refused, left as it is:"
                + " card " + A + " has no vGPU profile \"L40S-24Q\"",
                "GPU 1 (" + B + ", vgpu-configs.halves[0]): already holds 2 × \"L40S-24Q\"");
        assertThat(simulator.writeAttempts()).as("neither --assert nor --dry-run writes").isEqualTo(writes);
    }

    @Test
    void aVfTheKubeletAllocatedIsLeftAloneAndItsCardRefusedWithTheReason() throws Exception {
        assertThat(configure("default").code()).isZero();
        Files.writeString(plugins.resolve("kubelet_internal_checkpoint"), "{\"Data\":{\"PodDeviceEntries\":[{"
                + "\"PodUID\":\"4f1d\",\"ContainerName\":\"compute\",\"ResourceName\":\"nvidia.com/NVIDIA_L40S-12Q\","
                + "\"DeviceIDs\":{\"0\":[\"" + A0 + "\"]},\"AllocResp\":\"\"}],\"RegisteredDevices\":{}},"
                + "\"Checksum\":1}");
        long writes = simulator.writeAttempts();

        Run run = configure("halves");

        assertThat(run.code()).as(run.out() + run.err()).isEqualTo(1);
        assertThat(run.out()).contains("card " + A + ": refused, left as it was:", A0, "in use");
        assertThat(simulator.vgpus(A)).isEqualTo(fullA());
        assertThat(run.out()).contains("card " + B + ": already as asked");
        assertThat(simulator.writeAttempts()).isEqualTo(writes);
    }

    @Test
    void mixedSizesAndAnUnknownProfileAreRefusedNamingCardAndProfile() throws Exception {
        Run run = configure("mixed");

        assertThat(run.code()).as(run.out() + run.err()).isEqualTo(2);
        assertThat(run.out()).contains("GPU 0 (" + A + ", vgpu-configs.mixed[0]): card " + A + ": refused",
                "different framebuffer sizes", "L40S-12Q", "L40S-24Q");
        assertThat(run.out()).contains("GPU 1 (" + B + ", vgpu-configs.mixed[1]): card " + B + ": refused",
                "has no vGPU profile \"L40S-99Q\"");
        assertThat(simulator.vfCount(A)).isZero();
        assertThat(simulator.vfCount(B)).isZero();
    }

    @Test
    void aFailedWriteRollsItsCardBack() throws Exception {
        simulator.failWrite(3, WriteFault.FAIL); // card A: enable its VFs, set VF 0, then the set of VF 1 fails

        Run run = configure("default");

        assertThat(run.code()).as(run.out() + run.err()).isEqualTo(1);
        assertThat(run.out()).contains("card " + A + ": failed and rolled back to how it was");
        assertThat(simulator.vfCount(A)).isZero();
        assertThat(simulator.vgpus(B)).isEqualTo(halfB());
    }

    @Test
    void aFileMistakeIsExit2NamingTheField() throws Exception {
        Files.writeString(layouts, LAYOUTS.replace("device-filter", "device-filtre"));

        Run run = configure("default");

        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).contains("--vgpu-config " + layouts + ": vgpu-configs.default[1].device-filtre: unknown"
                + " field");
        Files.writeString(layouts, LAYOUTS);
        Run unknown = configure("nope");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("no layout is called \"nope\"");
        Files.delete(root.resolve(VgpuManagerSimulator.STATE_FILE));
        Run notSimulated = configure("default");
        assertThat(notSimulated.code()).isEqualTo(2);
        assertThat(notSimulated.err()).contains("it is not a simulated host");
    }

    @Test
    void afterARebootServeRestoresTheLayoutBeforeTheKubeletsFirstList() throws Exception {
        assertThat(configure("default").code()).isZero();
        simulator.reboot();
        assertThat(simulator.vfCount(A)).isZero();

        try (StandInKubelet kubelet = StandInKubelet.start(plugins);
             DaemonProcess daemon = DaemonProcess.start(DaemonProcess.jar().toString(), tmp.resolve("serve.log"),
                     "serve", "--host-root", root.toString(), "--simulated-host", "--vgpu-config", layouts.toString(),
                     "--select", "default", "--device-plugin-dir", plugins.toString(), "--pci-ids", pciIds.toString(),
                     "--metrics-address", "", "--no-nvml", "--state-dir", state.toString())) {
            String q12 = "nvidia.com/NVIDIA_L40S-12Q";
            String q24 = "nvidia.com/NVIDIA_L40S-24Q";
            kubelet.await(Duration.ofSeconds(90), k -> k.streaming(q12) && k.streaming(q24)
                    && k.resources().get(q12).size() == 4 && k.resources().get(q24).size() == 2);

            assertThat(simulator.vgpus(A)).isEqualTo(fullA());
            assertThat(simulator.vgpus(B)).isEqualTo(halfB());
            // The first list of each resource already carried every vGPU: the layout was there before the scan.
            assertThat(kubelet.listUpdates(q12)).as(daemon.output()).isEqualTo(1);
            assertThat(kubelet.listUpdates(q24)).as(daemon.output()).isEqualTo(1);
            assertThat(kubelet.registrations()).extracting(Registration::resourceName)
                    .containsOnly(q12, q24);
            assertThat(kubelet.resources().get(q12)).extracting(DeviceState::id).contains(A0);
            String log = daemon.output();
            assertThat(log.indexOf("vGPU layout: the host holds it")).as(log).isPositive()
                    .isLessThan(log.indexOf("serving 2 resources with 6 devices"));
        }
    }
}
