package dev.vgpu.daemon;

import static dev.vgpu.daemon.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.daemon.CliTest.Result;
import dev.vgpu.daemon.scan.ConfigOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code VGPU_CONFIG_YAML}: a configuration's text in the environment, for pods that mount no file (the GPU Operator's
 * sandbox slot). Same schema and refusals as a file, field paths prefixed with the variable; a file named by
 * {@code --config} or {@code VGPU_CONFIG} wins over it.
 */
class InlineConfigTest {

    private static final String RENAME = """
            version: v1
            resources:
              - match: {source: passthrough}
                name: nvidia.com/pgpu
            """;

    @TempDir
    Path tmp;

    private static Result discover(Map<String, String> env, String... more) {
        List<String> args = new ArrayList<>(List.of("discover", "--sample", "passthrough", "--format", "json",
                "--no-nvml"));
        args.addAll(List.of(more));
        return run(env, args.toArray(String[]::new));
    }

    private static TreeSet<String> resources(Result r) throws Exception {
        assertThat(r.code()).as("exit code; stderr:%n%s", r.err()).isZero();
        TreeSet<String> names = new TreeSet<>();
        new ObjectMapper().readTree(r.out()).get("resources").forEach(n -> names.add(n.get("resource").asText()));
        return names;
    }

    @Test
    void theVariablesTextIsTheConfiguration() throws Exception {
        assertThat(resources(discover(Map.of(ConfigOption.INLINE_ENV, RENAME)))).containsExactly("nvidia.com/pgpu");
        // The start line's "configuration ..." part says where it came from.
        assertThat(ConfigOption.inline(RENAME).describe()).startsWith("VGPU_CONFIG_YAML (1 rename rules");
        assertThat(ConfigOption.inline(" ").describe()).isEqualTo("none");
    }

    @Test
    void aFileNamedByTheFlagOrVgpuConfigWins() throws Exception {
        Path file = Files.writeString(tmp.resolve("c.yaml"), "version: v1\nexclude:\n  - source: passthrough\n");
        Map<String, String> both = Map.of(ConfigOption.INLINE_ENV, RENAME, ConfigOption.ENV, file.toString());
        assertThat(resources(discover(both))).isEmpty();
        assertThat(resources(discover(Map.of(ConfigOption.INLINE_ENV, RENAME), "--config", file.toString())))
                .isEmpty();
        // An empty --config turns files off; the inline text then applies.
        assertThat(resources(discover(both, "--config", ""))).containsExactly("nvidia.com/pgpu");
    }

    @Test
    void blankIsNone() throws Exception {
        assertThat(resources(discover(Map.of(ConfigOption.INLINE_ENV, "  \n")))).hasSize(2);
    }

    @Test
    void anInvalidTextIsExitTwoNamingTheVariableAndTheFieldPath() {
        Result r = discover(Map.of(ConfigOption.INLINE_ENV, """
                version: v1
                resources:
                  - match: {deviceId: "23311"}
                    name: nvidia.com/x
                """));
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("VGPU_CONFIG_YAML: resources[0].match.deviceId: ");
        Result unknown = discover(Map.of(ConfigOption.INLINE_ENV, "version: v1\ncolour: blue\n"));
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).startsWith("VGPU_CONFIG_YAML: ").contains("colour");
        Result notYaml = discover(Map.of(ConfigOption.INLINE_ENV, "version: [v1\n"));
        assertThat(notYaml.code()).isEqualTo(2);
        assertThat(notYaml.err()).startsWith("VGPU_CONFIG_YAML: ");
    }

    @Test
    void serveRefusesAnInvalidTextBeforeItStarts() {
        Result r = run(Map.of(ConfigOption.INLINE_ENV, "version: v2\n"), "serve", "--sample", "passthrough",
                "--no-nvml", "--device-plugin-dir", tmp.toString(), "--metrics-address", "");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("VGPU_CONFIG_YAML: ").contains("version");
    }

    @Test
    void theHelpOfServeNamesTheVariableAndDiscoversDoesNotPromiseSighup() {
        assertThat(run("serve", "--help").out()).contains("VGPU_CONFIG_YAML", "SIGHUP");
        assertThat(run("discover", "--help").out()).contains("VGPU_CONFIG_YAML").doesNotContain("SIGHUP");
    }
}
