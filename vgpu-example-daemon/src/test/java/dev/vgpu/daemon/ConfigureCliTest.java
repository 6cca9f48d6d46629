package dev.vgpu.daemon;

import static dev.vgpu.daemon.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.CliTest.Result;
import dev.vgpu.testing.SimulatedCard;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testing.VgpuManagerSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code configure} and the layout options of {@code serve} in process: usage, refusals, exit codes, the help. */
class ConfigureCliTest {

    static final String CARD = "0000:41:00.0";

    @TempDir
    Path tmp;

    Path layouts() throws Exception {
        return Files.writeString(tmp.resolve("layouts.yaml"), """
                version: v1
                vgpu-configs:
                  default:
                    - {devices: all, vgpu-devices: {"L40S-12Q": 2}}
                  twice:
                    - {devices: all, vgpu-devices: {"L40S-12Q": 2}}
                    - {devices: [0], vgpu-devices: {"L40S-24Q": 1}}
                  none:
                    - {devices: [7], vgpu-devices: {"L40S-12Q": 2}}
                """);
    }

    VgpuManagerSimulator simulated(Path root) {
        return VgpuManagerSimulator.create(SysfsTree.at(root), SimulatedCard.l40s(CARD).withTotalVfs(4));
    }

    Result configure(String... more) throws Exception {
        Path root = tmp.resolve("host");
        String[] base = {"configure", "--vgpu-config", layouts().toString(), "--host-root", root.toString(),
                "--simulated-host", "--device-plugin-dir", tmp.resolve("dp").toString(), "--no-nvml"};
        String[] args = new String[base.length + more.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(more, 0, args, base.length, more.length);
        return run(Map.of(), args);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            dry-run and assert       | configure --vgpu-config f --select a --dry-run --assert | --dry-run and --assert: give one of them
            simulated without a root | configure --vgpu-config f --select a --simulated-host   | --simulated-host needs --host-root
            no layout                | configure --dry-run                                     | configure needs a layout: --vgpu-config FILE --select NAME
            a file without a name    | configure --vgpu-config f                               | --vgpu-config names a layout file, but no layout is selected
            a name without a file    | configure --select a                                    | --select names a layout, but no file is given
            serve, a name only       | serve --select a --no-nvml --sample h200-sriov          | --select names a layout, but no file is given
            serve, a sample          | serve --vgpu-config f --select a --no-nvml --sample h200-sriov | --vgpu-config and --sample: a layout is applied to --host-root
            serve, simulated, no root| serve --simulated-host --no-nvml                        | --simulated-host needs --host-root
            """)
    void usageMistakesAreExit2NamingTheFix(String what, String line, String message) {
        Result r = run(line.split(" "));

        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).contains(message);
    }

    @Test
    void theVariablesStandForTheFlags() throws Exception {
        Path root = tmp.resolve("host");
        VgpuManagerSimulator simulator = simulated(root);

        Result r = run(Map.of("VGPU_VGPU_CONFIG", layouts().toString(), "VGPU_VGPU_CONFIG_SELECT", "default"),
                "configure", "--host-root", root.toString(), "--simulated-host", "--device-plugin-dir",
                tmp.resolve("dp").toString(), "--no-nvml");

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(simulator.vgpus(CARD).values()).containsExactly(1153L, 1153L, 0L, 0L);
    }

    @Test
    void aCardTwoEntriesNameIsAFileError() throws Exception {
        simulated(tmp.resolve("host"));

        Result r = configure("--select", "twice");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("vgpu-configs.twice[1]: card " + CARD + " (GPU 0) is named by"
                + " vgpu-configs.twice[0] too");
    }

    @Test
    void aLayoutThatNamesNoCardOfTheHostDoesNothing() throws Exception {
        VgpuManagerSimulator simulator = simulated(tmp.resolve("host"));

        Result r = configure("--select", "none");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("note: vgpu-configs.none[0] (for GPU 7) names no card of this host, which has 1"
                + " card that can host vendor-VFIO vGPUs: GPU 0 " + CARD + " (0x26B910DE)",
                "no card of this host is named by the layout: nothing to do");
        assertThat(simulator.writeAttempts()).isZero();
    }

    @Test
    void aCorruptKubeletCheckpointWritesNothingAndSaysWhy() throws Exception {
        VgpuManagerSimulator simulator = simulated(tmp.resolve("host"));
        Files.createDirectories(tmp.resolve("dp"));
        Files.writeString(tmp.resolve("dp/kubelet_internal_checkpoint"), "{\"Data\": [");

        Result r = configure("--select", "default");

        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("configure: which VFs are in use cannot be told, so nothing is written: the"
                + " kubelet's device checkpoint " + tmp.resolve("dp/kubelet_internal_checkpoint") + " cannot be used");
        assertThat(simulator.writeAttempts()).isZero();
    }

    @Test
    void aHostWithoutSysfsIsExit1AndSaysSo() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("empty"));

        Result r = run("configure", "--vgpu-config", layouts().toString(), "--select", "default", "--host-root",
                empty.toString(), "--device-plugin-dir", tmp.resolve("dp").toString(), "--no-nvml");

        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("configure: the host's PCI functions cannot be listed under " + empty);
    }

    @Test
    void theHelpListsConfigureAndItsOptions() {
        Result top = run("--help");
        assertThat(top.out()).contains("configure");

        Result help = run("configure", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("--vgpu-config", "--select", "--dry-run", "--assert", "--simulated-host",
                "--device-plugin-dir", "--state-dir", "VGPU_VGPU_CONFIG_SELECT");
        assertThat(run("serve", "--help").out()).contains("--vgpu-config", "--select");
    }
}
