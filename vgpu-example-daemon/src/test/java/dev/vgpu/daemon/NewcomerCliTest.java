package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.CliTest.Result;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a newcomer hit (issue 31): a flag silently ignored, missing flags named one run at a time, an off-cluster DRA
 * daemon that would retry forever, a start line that contradicts itself, a SIGHUP line that does not say what changed.
 */
class NewcomerCliTest {

    @TempDir
    Path tmp;

    @Test
    void discoverRefusesASampleTogetherWithAHostRootAsServeDoes() {
        for (String command : new String[] {"discover", "serve"}) {
            Result r = CliTest.run(command, "--sample", "passthrough", "--host-root", tmp.toString(), "--no-nvml");
            assertThat(r.code()).as(command).isEqualTo(2);
            assertThat(r.err()).as(command).startsWith("--sample and --host-root: give one of them\n");
        }
    }

    @Test
    void draModeNamesEveryMissingFlagInOneMessage() {
        Result r = CliTest.run("serve", "--mode", "dra", "--sample", "passthrough", "--no-nvml", "--kubelet-root",
                tmp.toString(), "--metrics-address", "");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--mode dra needs --node-name or NODE_NAME", "; and --state-dir or VGPU_STATE_DIR");
    }

    @Test
    void draModeOutsideAClusterWithoutAKubeconfigSaysSoInsteadOfRetrying() {
        Result r = CliTest.run(Map.of("NODE_NAME", "node-a"), "serve", "--mode", "dra", "--sample", "passthrough",
                "--no-nvml", "--kubelet-root", tmp.toString(), "--state-dir", tmp.resolveSibling(tmp.getFileName()
                        + "-state").toString(),
                "--metrics-address", "");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("not in a cluster", "--kubeconfig or KUBECONFIG");
    }

    @Test
    void withoutNvmlTheStartLineSaysXidHealthIsOffWhateverTheConfigurationAsks() {
        LiveConfig inline = ConfigOption.inline("version: v1\n");
        assertThat(inline.describe()).contains("XID health on");
        assertThat(inline.describeWithoutNvml()).contains("XID health off").doesNotContain("XID health on");
        assertThat(LiveConfig.none().describeWithoutNvml()).isEqualTo("none");
    }

    @Test
    void aReloadSaysWhatChanged() throws Exception {
        ConfigFile before = ConfigParser.parse("version: v1\n");
        ConfigFile after = ConfigParser.parse("""
                version: v1
                exclude:
                  - address: "0000:65:00.0"
                health:
                  xid:
                    ignored: [13]
                """);
        String changes = LiveConfig.none().changes(before, after);
        assertThat(changes).contains("exclusions changed, 0 -> 1", "health.xid: ").contains("ignoring XIDs [13]")
                .doesNotContain("rename rules");
        assertThat(LiveConfig.none().changes(before, before))
                .isEqualTo("nothing that applies before the next start changed");
    }
}
