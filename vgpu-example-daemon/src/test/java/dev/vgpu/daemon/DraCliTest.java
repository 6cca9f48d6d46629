package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.CliTest.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code serve --mode}'s refusals: each is exit code 2 with one message naming the flag or variable, before anything
 * is served or contacted.
 */
class DraCliTest {

    @TempDir
    Path tmp;

    private String[] dra(String... more) throws Exception {
        Path kubelet = Files.createDirectories(tmp.resolve("kubelet"));
        String[] base = {"serve", "--mode", "dra", "--sample", "passthrough", "--no-nvml", "--metrics-address", "",
            "--kubelet-root", kubelet.toString()};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    @Test
    void draModeWithoutANodeNameIsExitTwoNamingTheFlagAndTheVariable() throws Exception {
        Result r = CliTest.run(dra("--state-dir", tmp.resolve("state").toString()));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--mode dra needs --node-name or NODE_NAME");
    }

    @Test
    void draModeWithoutAStateDirectoryIsExitTwo() throws Exception {
        Result r = CliTest.run(Map.of("NODE_NAME", "node-a"), dra());

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--mode dra needs --state-dir or VGPU_STATE_DIR");
    }

    @Test
    void aStateDirectoryInsideTheKubeletRootIsExitTwoNamingBoth() throws Exception {
        Path inside = tmp.resolve("kubelet").resolve("vgpu-state");
        Result r = CliTest.run(Map.of("NODE_NAME", "node-a"), dra("--state-dir", inside.toString()));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--state-dir " + inside + " is inside the --kubelet-root "
                + tmp.resolve("kubelet")).doesNotContain("--device-plugin-dir");
        assertThat(inside).doesNotExist();
    }

    @ParameterizedTest
    @CsvSource({"--dra-driver,Not_A_Subdomain,invalid --dra-driver value: a DRA driver name is a DNS subdomain",
        "--device-plugin-dir,/tmp,--device-plugin-dir is an option of device-plugin mode"})
    void aBadDriverNameOrADevicePluginFlagInDraModeIsExitTwo(String flag, String value, String message)
            throws Exception {
        Result r = CliTest.run(Map.of("NODE_NAME", "node-a"), dra("--state-dir", tmp.resolve("state").toString(),
                flag, value));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains(message).doesNotContain("Exception");
    }

    @Test
    void aDraFlagInDevicePluginModeIsExitTwoNamingIt() {
        Result r = CliTest.run("serve", "--sample", "passthrough", "--no-nvml", "--node-name", "node-a");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--node-name is an option of --mode dra; this daemon runs in device-plugin"
                + " mode");
    }

    @Test
    void anUnknownModeIsExitTwoFromTheFlagAndFromTheVariable() {
        Result flag = CliTest.run("serve", "--mode", "both");
        assertThat(flag.code()).isEqualTo(2);
        assertThat(flag.err()).contains("invalid --mode value \"both\": use device-plugin or dra");
        Result env = CliTest.run(Map.of("VGPU_MODE", "kubevirt"), "serve", "--sample", "passthrough");
        assertThat(env.code()).isEqualTo(2);
        assertThat(env.err()).contains("invalid VGPU_MODE value \"kubevirt\"");
    }

    @Test
    void anUnreadableKubeconfigIsExitTwoNamingIt() throws Exception {
        Result r = CliTest.run(Map.of("NODE_NAME", "node-a", "KUBECONFIG", tmp.resolve("none").toString()),
                dra("--state-dir", tmp.resolve("state").toString()));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("KUBECONFIG " + tmp.resolve("none") + " does not exist");
    }

    @Test
    void aKubeconfigListOfSeveralFilesIsRefusedSayingSo() throws Exception {
        java.nio.file.Path one = java.nio.file.Files.writeString(tmp.resolve("one"), "apiVersion: v1\nkind: Config\n");
        String list = one + ":" + tmp.resolve("two");
        Result r = CliTest.run(Map.of("NODE_NAME", "node-a", "KUBECONFIG", list),
                dra("--state-dir", tmp.resolve("state").toString()));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("KUBECONFIG lists several files (" + list + "): the daemon reads one kubeconfig")
                .doesNotContain("does not exist");
    }

    /**
     * docs/RELIABILITY.md, "DRA mode": a second daemon for the same driver and kubelet root, with a state directory of
     * its own, is exit 2 naming the first before it touches a socket (the first: a plugin of this JVM).
     */
    @Test
    @org.junit.jupiter.api.Tag("reliability")
    void aSecondDaemonForTheSameDriverAndKubeletRootIsExitTwoNamingTheFirst() throws Exception {
        Path kubelet = Files.createDirectories(tmp.resolve("kubelet"));
        Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """);
        try (dev.vgpu.dra.DraPlugin first = dev.vgpu.dra.DraPlugin.builder(dev.vgpu.attach.Handovers.forHost(
                dev.vgpu.core.spi.Host.of(tmp.resolve("host")), java.util.List.of()),
                ref -> new dev.vgpu.dra.ClaimReader.Unavailable("none")).pool("node-a").kubeletRoot(kubelet)
                .cdiDir(tmp.resolve("cdi")).stateDir(tmp.resolve("first-state")).start()) {
            Object socket = dev.vgpu.kubelet.api.transport.UnixDomainTransport.socketKey(first.draSocket());

            Result r = CliTest.run(Map.of("NODE_NAME", "node-a"), dra("--state-dir",
                    tmp.resolve("second-state").toString(), "--cdi-dir", tmp.resolve("cdi").toString(),
                    "--kubeconfig", kubeconfig.toString()));

            assertThat(r.code()).isEqualTo(2);
            assertThat(r.err()).contains("is served already by pid " + ProcessHandle.current().pid()
                    + " (state directory " + tmp.resolve("first-state"));
            assertThat(dev.vgpu.kubelet.api.transport.UnixDomainTransport.socketKey(first.draSocket()))
                    .as("the first one's socket is untouched").isEqualTo(socket).isNotNull();
        }
    }
}
