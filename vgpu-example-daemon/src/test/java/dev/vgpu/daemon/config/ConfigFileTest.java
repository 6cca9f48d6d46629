package dev.vgpu.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.DeviceMatch;
import dev.vgpu.core.RenameRule;
import dev.vgpu.core.ResourceName;
import dev.vgpu.nvml.XidPolicy;
import dev.vgpu.nvml.XidWatcher;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The configuration file's schema: every field, and every refusal with the path of the field at fault. */
class ConfigFileTest {

    @TempDir
    Path tmp;

    /** The README's complete example, exactly as the README shows it. */
    static String readmeExample() throws Exception {
        String readme = Files.readString(Path.of("../README.md"));
        int marker = readme.indexOf("<!-- config-example -->\n```yaml\n");
        assertThat(marker).as("the README's example block").isNotNegative();
        int start = readme.indexOf('\n', readme.indexOf("```yaml", marker)) + 1;
        return readme.substring(start, readme.indexOf("```\n", start));
    }

    private static ConfigFile parse(String yaml) throws ConfigFile.Invalid {
        return ConfigParser.parse(yaml);
    }

    @Test
    void theReadmeExampleLoadsWithEveryField() throws Exception {
        ConfigFile config = parse(readmeExample());

        assertThat(config.rules().renames()).containsExactly(
                new RenameRule(DeviceMatch.source("passthrough"), new ResourceName("pgpu")),
                new RenameRule(new DeviceMatch(Optional.of("vendor-vfio"), Optional.of("26b9"),
                        Optional.of("NVIDIA L40S-1Q"), Optional.empty()), new ResourceName("l40s-small")),
                new RenameRule(DeviceMatch.address("0000:1b:00.4"), new ResourceName("reserved-vf")));
        assertThat(config.rules().exclusions()).containsExactly(DeviceMatch.address("0000:65:00.0"),
                new DeviceMatch(Optional.of("mdev"), Optional.empty(), Optional.of("NVIDIA A10-24Q"), Optional.empty()));
        assertThat(config.typeNames().names()).isEqualTo(Map.of("26b9",
                Map.of(1153L, "NVIDIA L40S-2Q", 1155L, "NVIDIA L40S-4Q")));
        assertThat(config.xid()).isEqualTo(XidPolicy.defaults());
        assertThat(config.xid().ignored()).as("the README shows the default list").isEqualTo(
                XidWatcher.DEFAULT_IGNORED_XIDS);
    }

    @Test
    void onlyTheVersionIsRequiredAndAbsentSectionsKeepTheDefaults() throws Exception {
        assertThat(parse("version: v1\n")).isEqualTo(ConfigFile.NONE);
        assertThat(parse("version: v1\nhealth: {xid: {}}\nresources: []\n")).isEqualTo(ConfigFile.NONE);
        assertThat(parse("version: v1\nhealth: {xid: {enabled: false}}\n").xid()).isEqualTo(XidPolicy.off());
        assertThat(parse("version: v1\nhealth: {xid: {ignored: []}}\n").xid().ignored()).isEmpty();
        assertThat(parse("version: v1\nhealth: {xid: {ignored: [79, 48, 79], recoverAfter: 0}}\n").xid())
                .isEqualTo(new XidPolicy(true, Set.of(48L, 79L)));
        assertThat(parse("version: v1\nhealth: {xid: {recoverAfter: 1h30m}}\n").xid())
                .isEqualTo(XidPolicy.defaults().withRecoverAfter(java.time.Duration.ofMinutes(90)));
        assertThat(parse("version: v1\nhealth: {xid: {recoverAfter: 0s}}\n").xid()).isEqualTo(XidPolicy.defaults());
        assertThat(parse("version: v1\nvgpuTypeNames: {\"26B9\": {1152: NVIDIA L40S-1Q}}\n").typeNames().names())
                .as("type ids as numbers, device ids in any case").isEqualTo(Map.of("26b9", Map.of(1152L,
                        "NVIDIA L40S-1Q")));
        assertThat(parse("version: v1\nexclude: [{address: 0000:1B:00.4}]\n").rules().exclusions())
                .containsExactly(DeviceMatch.address("0000:1b:00.4"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        // what                 | file (\n for new lines)                                               | message
        "empty file             | ''                                                                    | the file is empty; it needs at least \"version: v1\"",
        "no version             | 'resources: []'                                                       | version: missing",
        "unknown version        | 'version: v2'                                                         | version: \"v2\" is not a version this daemon reads (it reads v1)",
        "version as a number    | 'version: 1'                                                          | version: 1 is not a version this daemon reads",
        "unknown top field      | 'version: v1\\nexlcude: []'                                           | exlcude: unknown field (known here: exclude, health, resources, version, vgpuTypeNames)",
        "unknown match field    | 'version: v1\\nresources: [{match: {vendor: 10de}, name: nvidia.com/a}]' | resources[0].match.vendor: unknown field (known here: address, deviceId, profile, source)",
        "unknown rule field     | 'version: v1\\nresources: [{match: {source: mdev}, name: nvidia.com/a, when: x}]' | resources[0].when: unknown field",
        "resources not a list   | 'version: v1\\nresources: {match: {}}'                                | resources: expected a list, got a mapping",
        "rule not a mapping     | 'version: v1\\nresources: [pgpu]'                                     | resources[0]: expected a mapping (field: value), got \"pgpu\"",
        "bad device id          | 'version: v1\\nresources: [{match: {source: mdev}, name: nvidia.com/a}, {match: {deviceId: \"23311\"}, name: nvidia.com/b}]' | resources[1].match.deviceId: deviceId \"23311\" is not 4 hex digits",
        "unquoted device id     | 'version: v1\\nresources: [{match: {deviceId: 2331}, name: nvidia.com/b}]' | resources[0].match.deviceId: expected text, got the number 2331 (quote it: \"2331\"",
        "empty match            | 'version: v1\\nresources: [{match: {}, name: nvidia.com/a}]'          | resources[0].match: empty; give at least one of source, deviceId, profile, address",
        "missing match          | 'version: v1\\nresources: [{name: nvidia.com/a}]'                    | resources[0].match: missing",
        "missing name           | 'version: v1\\nresources: [{match: {source: mdev}}]'                  | resources[0].name: missing",
        "name without namespace | 'version: v1\\nresources: [{match: {source: mdev}, name: pgpu}]'      | resources[0].name: \"pgpu\" is not a full extended-resource name: write nvidia.com/<name>",
        "bad name               | 'version: v1\\nresources: [{match: {source: mdev}, name: \"nvidia.com/my gpu\"}]' | resources[0].name: \"nvidia.com/my gpu\" is not a valid resource name",
        "name too long          | 'version: v1\\nresources: [{match: {source: mdev}, name: nvidia.com/a234567890123456789012345678901234567890123456789012345678901234}]' | resources[0].name: \"nvidia.com/a2345",
        "name with ..           | 'version: v1\\nresources: [{match: {source: mdev}, name: nvidia.com/a..b}]' | resources[0].name: \"nvidia.com/a..b\" is not a valid resource name",
        "bad address            | 'version: v1\\nexclude: [{address: \"65:00.0\"}]'                    | exclude[0].address: address \"65:00.0\" is neither a PCI address",
        "empty exclusion        | 'version: v1\\nexclude: [{}]'                                         | exclude[0]: empty; give at least one of",
        "blank profile          | 'version: v1\\nexclude: [{profile: \" \"}]'                           | exclude[0].profile: profile \" \" names no profile",
        "source as a list       | 'version: v1\\nexclude: [{source: [mdev]}]'                           | exclude[0].source: expected text, got a list",
        "unquoted type table id | 'version: v1\\nvgpuTypeNames: {2331: {1: a}}'                         | vgpuTypeNames.2331: expected text, got the number 2331 (quote the device id",
        "bad type table id      | 'version: v1\\nvgpuTypeNames: {\"26b\": {1: a}}'                      | vgpuTypeNames.26b: \"26b\" is not 4 hex digits",
        "bad type id            | 'version: v1\\nvgpuTypeNames: {\"26b9\": {x1: a}}'                    | vgpuTypeNames.26b9.\"x1\": not a vGPU type id",
        "empty profile name     | 'version: v1\\nvgpuTypeNames: {\"26b9\": {\"1153\": \"\"}}'           | vgpuTypeNames.26b9.1153: the profile name is empty",
        "profile name a number  | 'version: v1\\nvgpuTypeNames: {\"26b9\": {\"1153\": 5}}'              | vgpuTypeNames.26b9.1153: expected text, got the number 5",
        "unknown health field   | 'version: v1\\nhealth: {nvml: {}}'                                    | health.nvml: unknown field (known here: xid)",
        "unknown xid field      | 'version: v1\\nhealth: {xid: {recover: 5m}}'                          | health.xid.recover: unknown field (known here: enabled, ignored, recoverAfter)",
        "enabled not a boolean  | 'version: v1\\nhealth: {xid: {enabled: yes}}'                         | health.xid.enabled: expected true or false, got \"yes\"",
        "ignored not a list     | 'version: v1\\nhealth: {xid: {ignored: 43}}'                          | health.xid.ignored: expected a list, got the number 43",
        "ignored not an XID     | 'version: v1\\nhealth: {xid: {ignored: [43, -1]}}'                    | health.xid.ignored[1]: -1 is not an XID (a positive integer such as 43)",
        "bad duration           | 'version: v1\\nhealth: {xid: {recoverAfter: 5 minutes}}'              | health.xid.recoverAfter: \"5 minutes\" is not a Go duration",
        "negative recovery      | 'version: v1\\nhealth: {xid: {recoverAfter: -5m}}'                    | health.xid.recoverAfter: \"-5m\" is negative; write a quiet period such as 10m",
        "recovery not text      | 'version: v1\\nhealth: {xid: {recoverAfter: 300}}'                    | health.xid.recoverAfter: expected text, got the number 300 (a Go duration such as 10m, or 0 for never)",
        "duplicate key          | 'version: v1\\nversion: v1'                                           | not valid YAML: line 2, column 1",
        "not YAML               | 'version: v1\\nresources: [a'                                         | not valid YAML: line 2, column 14: expected",
        "two documents          | 'version: v1\\n---\\nversion: v1'                                     | not valid YAML",
        "nested too deeply      | '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['                                                                    | not valid YAML",
        "a list at the top      | '- version: v1'                                                       | (the file): expected a mapping (field: value), got a list",
    })
    void refusalsNameTheFieldPath(String what, String yaml, String message) {
        assertThatThrownBy(() -> parse(yaml.replace("\\n", "\n"))).as(what)
                .isInstanceOf(ConfigFile.Invalid.class).hasMessageContaining(message);
    }

    @Test
    void aFileThatIsMissingADirectoryTooLargeOrNotUtf8IsRefused() throws Exception {
        assertThatThrownBy(() -> ConfigParser.read(tmp.resolve("absent.yaml"))).hasMessage("the file does not exist");
        assertThatThrownBy(() -> ConfigParser.read(tmp)).hasMessageContaining("is a directory");
        Path big = Files.write(tmp.resolve("big.yaml"), new byte[ConfigParser.MAX_BYTES + 1]);
        assertThatThrownBy(() -> ConfigParser.read(big)).hasMessageContaining("larger than 1048576 bytes");
        Path latin1 = Files.write(tmp.resolve("latin1.yaml"), "version: v1\n# caf\u00e9\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> ConfigParser.read(latin1)).hasMessage("the file is not UTF-8 text");
        Path ok = Files.writeString(tmp.resolve("ok.yaml"), readmeExample());
        assertThat(ConfigParser.read(ok)).isEqualTo(parse(readmeExample()));
        assertThat(List.of(ConfigParser.read(ok).describe())).singleElement().asString()
                .startsWith("3 rename rules, 2 exclusions, vGPU type names for 1 device ids, XID health on");
    }
}
