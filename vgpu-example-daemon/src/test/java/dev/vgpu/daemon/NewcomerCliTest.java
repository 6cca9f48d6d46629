package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.CliTest.Result;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a newcomer hit (issue 31): a flag silently ignored, missing flags named one run at a time, an off-cluster DRA
 * daemon that would retry forever (the start line that contradicted itself and the SIGHUP line that did not say what
 * changed are in config/LiveConfigTest).
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
}
