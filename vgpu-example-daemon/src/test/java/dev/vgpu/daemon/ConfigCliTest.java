package dev.vgpu.daemon;

import static dev.vgpu.daemon.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.daemon.CliTest.Result;
import dev.vgpu.daemon.scan.ConfigOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code --config} through the command line on the bundled sample hosts (real sysfs trees, the built-in sources). */
class ConfigCliTest {

    @TempDir
    Path tmp;

    private Path file(String name, String yaml) throws Exception {
        return Files.writeString(tmp.resolve(name), yaml);
    }

    /** Resource name → device ids, in the JSON's order. */
    private static Map<String, List<String>> resources(Result r) throws Exception {
        assertThat(r.code()).as(r.err()).isZero();
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (JsonNode resource : new ObjectMapper().readTree(r.out()).get("resources")) {
            List<String> ids = new ArrayList<>();
            resource.get("devices").forEach(d -> ids.add(d.get("id").asText()));
            out.put(resource.get("resource").asText(), ids);
        }
        return out;
    }

    private static Map<String, String> skips(Result r) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        new ObjectMapper().readTree(r.out()).get("skipped").forEach(s -> out.put(s.get("id").asText(),
                s.get("reason").asText()));
        return out;
    }

    private static Result discover(Map<String, String> env, String sample, String... more) {
        List<String> args = new ArrayList<>(List.of("discover", "--sample", sample, "--format", "json", "--no-nvml"));
        args.addAll(List.of(more));
        return run(env, args.toArray(String[]::new));
    }

    @Test
    void aGenericNameGathersEveryPassthroughGpuAndTheFirstMatchingRuleWins() throws Exception {
        Path config = file("c.yaml", """
                version: v1
                resources:
                  - match: {address: "0000:C1:00.0"}
                    name: nvidia.com/reserved
                  - match: {source: passthrough, deviceId: "2331"}
                    name: nvidia.com/pgpu
                  - match: {source: passthrough}
                    name: nvidia.com/pgpu
                  - match: {source: passthrough}
                    name: nvidia.com/never-used
                """);
        Map<String, List<String>> before = resources(discover(Map.of(), "passthrough"));
        assertThat(before).containsOnlyKeys("nvidia.com/GH100_H100_PCIE", "nvidia.com/GH100_H200_SXM_141GB");

        assertThat(resources(discover(Map.of(), "passthrough", "--config", config.toString()))).isEqualTo(Map.of(
                "nvidia.com/pgpu", List.of("0000:41:00.0", "0009:01:00.0"),
                "nvidia.com/reserved", List.of("0000:c1:00.0")));
    }

    @Test
    void renamesByProfileAndExclusionsOnVendorVfio() throws Exception {
        Path config = file("c.yaml", """
                version: v1
                resources:
                  - match: {source: vendor-vfio, deviceId: "2335", profile: "NVIDIA H200X-1-18C"}
                    name: nvidia.com/h200-small
                exclude:
                  - address: "0000:1b:00.6"
                  - source: passthrough
                """);
        Result r = discover(Map.of(), "h200-sriov", "--config", config.toString());

        assertThat(resources(r)).isEqualTo(Map.of("nvidia.com/h200-small", List.of("0000:1b:00.4", "0000:1b:00.5")));
        assertThat(skips(r)).containsEntry("0000:1b:00.6", "excluded by the configuration")
                .containsEntry("0000:41:00.0", "excluded by the configuration");
    }

    @Test
    void vgpuTypeNamesNameAFullCardWithoutNvmlFromTheFirstStart() throws Exception {
        // Card B of the sample is full from the start: every catalog is a header, and there is no NVML.
        Map<String, String> without = skips(discover(Map.of(), "h200-sriov"));
        assertThat(without).containsKey("0000:9b:00.4");
        Path config = file("c.yaml", """
                version: v1
                vgpuTypeNames:
                  "2335": {"1428": "NVIDIA H200X-141C"}
                """);

        Result r = discover(Map.of(), "h200-sriov", "--config", config.toString());

        assertThat(resources(r)).containsEntry("nvidia.com/NVIDIA_H200X-141C", List.of("0000:9b:00.4"));
        assertThat(skips(r)).doesNotContainKey("0000:9b:00.4");
    }

    @ParameterizedTest(name = "flag {0}, env {1}")
    @CsvSource(nullValues = "-", value = {
        "a.yaml, b.yaml, nvidia.com/from-a",
        "-,      b.yaml, nvidia.com/from-b",
        "'',     b.yaml, nvidia.com/GH100_H100_PCIE",
        "-,      '',     nvidia.com/GH100_H100_PCIE",
    })
    void theFlagWinsOverTheEnvironmentAndAnEmptyValueTurnsTheFileOff(String flag, String env, String expected)
            throws Exception {
        file("a.yaml", "version: v1\nresources: [{match: {deviceId: \"2331\"}, name: nvidia.com/from-a}]\n");
        file("b.yaml", "version: v1\nresources: [{match: {deviceId: \"2331\"}, name: nvidia.com/from-b}]\n");
        String envValue = env == null || env.isEmpty() ? env : tmp.resolve(env).toString();
        Map<String, String> environment = envValue == null ? Map.of() : Map.of(ConfigOption.ENV, envValue);
        Result r = flag == null ? discover(environment, "passthrough")
                : discover(environment, "passthrough", "--config", flag.isEmpty() ? "" : tmp.resolve(flag).toString());

        assertThat(resources(r)).containsKey(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "serve    | --config",
        "discover | --config",
        "serve    | " + ConfigOption.ENV,
        "discover | " + ConfigOption.ENV,
    })
    void aBadFileStopsServeAndDiscoverWithExitTwoNamingTheOriginTheFileAndTheField(String command, String origin)
            throws Exception {
        Path bad = file("bad.yaml", "version: v1\nresources:\n  - {match: {source: mdev}, name: nvidia.com/ok}\n"
                + "  - {match: {deviceId: \"23311\"}, name: nvidia.com/b}\n");
        List<String> args = new ArrayList<>(List.of(command, "--host-root", tmp.toString(), "--no-nvml"));
        if (command.equals("serve")) {
            args.addAll(List.of("--device-plugin-dir", Files.createDirectories(tmp.resolve("dp")).toString(),
                    "--metrics-address", ""));
        }
        if (origin.equals("--config")) {
            args.addAll(List.of("--config", bad.toString()));
        }
        Result r = run(origin.equals("--config") ? Map.of() : Map.of(ConfigOption.ENV, bad.toString()),
                args.toArray(String[]::new));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains(origin + " " + bad + ": resources[1].match.deviceId: deviceId \"23311\" is not"
                + " 4 hex digits").doesNotContain("Usage:");
        assertThat(Files.exists(tmp.resolve("dp/kubevirt-ok.sock"))).isFalse();
    }

    @Test
    void aRenameToAnInvalidNameAndAMissingFileAreRefused() throws Exception {
        Path bad = file("bad.yaml", "version: v1\nresources: [{match: {source: passthrough}, name: nvidia.com/-pgpu}]\n");
        Result invalid = discover(Map.of(), "passthrough", "--config", bad.toString());
        assertThat(invalid.code()).isEqualTo(2);
        assertThat(invalid.err()).contains("resources[0].name: \"nvidia.com/-pgpu\" is not a valid resource name");

        Result missing = discover(Map.of(), "passthrough", "--config", tmp.resolve("nope.yaml").toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("--config " + tmp.resolve("nope.yaml") + ": the file does not exist");
    }

    @Test
    void kubevirtFormatPrintsThePermittedHostDevicesForTheSamples() throws Exception {
        Result pci = run("discover", "--sample", "h200-sriov", "--format", "kubevirt", "--no-nvml");
        assertThat(pci.code()).as(pci.err()).isZero();
        assertThat(pci.out()).endsWith("""
                spec:
                  configuration:
                    permittedHostDevices:
                      pciHostDevices:
                        - pciVendorSelector: "10DE:2331"
                          resourceName: "nvidia.com/GH100_H100_PCIE"
                          externalResourceProvider: true
                        - pciVendorSelector: "10DE:2335"
                          resourceName: "nvidia.com/NVIDIA_H200X-1-18C"
                          externalResourceProvider: true
                        - pciVendorSelector: "10DE:2335"
                          resourceName: "nvidia.com/NVIDIA_H200X-2-35C"
                          externalResourceProvider: true
                      mediatedDevices: []
                """);

        Path config = file("c.yaml", "version: v1\nresources: [{match: {profile: NVIDIA A10-8Q}, name: nvidia.com/a10"
                + "-small}]\n");
        Result mdev = run("discover", "--sample", "a10-mdev", "--format", "kubevirt", "--no-nvml", "--config",
                config.toString());
        assertThat(mdev.code()).as(mdev.err()).isZero();
        assertThat(mdev.out()).endsWith("""
                      pciHostDevices: []
                      mediatedDevices:
                        - mdevNameSelector: "NVIDIA A10-12Q"
                          resourceName: "nvidia.com/NVIDIA_A10-12Q"
                          externalResourceProvider: true
                        - mdevNameSelector: "NVIDIA A10-8Q"
                          resourceName: "nvidia.com/a10-small"
                          externalResourceProvider: true
                """);
        // What kubectl would read: YAML whose every entry KubeVirt accepts.
        JsonNode doc = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper().readTree(mdev.out());
        assertThat(doc.at("/spec/configuration/permittedHostDevices/mediatedDevices/1/mdevNameSelector").asText())
                .isEqualTo("NVIDIA A10-8Q");
        assertThat(doc.at("/spec/configuration/permittedHostDevices/pciHostDevices").isArray()).isTrue();
    }
}
