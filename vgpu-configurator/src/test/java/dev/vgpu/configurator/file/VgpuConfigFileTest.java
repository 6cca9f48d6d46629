package dev.vgpu.configurator.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** vgpu-device-manager's file format: what is read, and every refusal naming its field. */
class VgpuConfigFileTest {

    static final String EXAMPLE = """
            version: v1
            vgpu-configs:
              default:
                - devices: all
                  vgpu-devices:
                    "L40S-12Q": 4
              per-card:
                - devices: [0]
                  device-filter: "0x26B910DE"
                  vgpu-devices: {"NVIDIA L40S-24Q": 2}
                - devices: [1, 2]
                  device-filter: ["0x26B910DE", "0x233510DE"]
                  vgpu-devices: {"L40S-4Q": 12, "L40S-4A": 0}
              empty:
                - devices: all
                  vgpu-devices: {}
            """;

    @TempDir
    Path dir;

    @Test
    void readsEveryFormOfAnEntry() throws Exception {
        VgpuConfigFile file = VgpuConfigFile.parse(EXAMPLE);

        assertThat(file.configs().keySet()).containsExactly("default", "empty", "per-card");
        VgpuConfigSpec all = file.configs().get("default").get(0);
        assertThat(all.path()).isEqualTo("vgpu-configs.default[0]");
        assertThat(all.indexes()).isEmpty();
        assertThat(all.deviceFilter()).isEmpty();
        assertThat(all.vgpuDevices()).isEqualTo(Map.of("L40S-12Q", 4));

        List<VgpuConfigSpec> perCard = file.select("per-card").specs();
        assertThat(perCard.get(0).indexes()).contains(new TreeSet<>(Set.of(0)));
        assertThat(perCard.get(0).deviceFilter()).containsExactly(0x26B910DEL);
        assertThat(perCard.get(0).vgpuDevices()).isEqualTo(Map.of("NVIDIA L40S-24Q", 2));
        assertThat(perCard.get(1).path()).isEqualTo("vgpu-configs.per-card[1]");
        assertThat(perCard.get(1).indexes()).contains(new TreeSet<>(Set.of(1, 2)));
        assertThat(perCard.get(1).deviceFilter()).containsExactly(0x233510DEL, 0x26B910DEL);
        assertThat(perCard.get(1).vgpuDevices()).isEqualTo(Map.of("L40S-4Q", 12, "L40S-4A", 0));
        assertThat(file.select("empty").specs().get(0).vgpuDevices()).isEmpty();
    }

    @Test
    void anEntryMatchesByIndexAndFilter() throws Exception {
        List<VgpuConfigSpec> perCard = VgpuConfigFile.parse(EXAMPLE).select("per-card").specs();

        assertThat(perCard.get(0).matches(0, 0x26B910DEL)).isTrue();
        assertThat(perCard.get(0).matches(1, 0x26B910DEL)).isFalse();
        assertThat(perCard.get(0).matches(0, 0x233510DEL)).isFalse();
        assertThat(perCard.get(1).matches(2, 0x233510DEL)).isTrue();
        assertThat(perCard.get(1).describeTarget()).isEqualTo("GPUs [1, 2] with device id 0x233510DE or 0x26B910DE");
        assertThat(VgpuConfigFile.parse(EXAMPLE).select("default").specs().get(0).matches(7, 1)).isTrue();
    }

    @Test
    void aDeviceFilterMayBeANumberOrDecimalText() throws Exception {
        VgpuConfigFile file = VgpuConfigFile.parse("""
                version: v1
                vgpu-configs:
                  a:
                    - {devices: all, device-filter: 0x26B910DE, vgpu-devices: {}}
                    - {devices: all, device-filter: "649662686", vgpu-devices: {}}
                """);

        assertThat(file.configs().get("a")).extracting(VgpuConfigSpec::deviceFilter)
                .allMatch(ids -> ids.equals(new TreeSet<>(Set.of(0x26B910DEL))));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            unknown top field        | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {}}]}\\nmig-configs: {} | mig-configs: unknown field (known here: version, vgpu-configs)
            unknown version          | version: v2\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {}}]}               | version: "v2" is not a version this reads
            missing version          | vgpu-configs: {a: [{devices: all, vgpu-devices: {}}]}                            | version: missing
            missing configs          | version: v1                                                                      | vgpu-configs: missing
            empty configs            | version: v1\\nvgpu-configs: {}                                                   | vgpu-configs: empty
            empty layout             | version: v1\\nvgpu-configs: {a: []}                                              | vgpu-configs.a: empty; a layout needs at least one entry
            unknown entry field      | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {}, mode: x}]}     | vgpu-configs.a[0].mode: unknown field (known here: device-filter, devices, vgpu-devices)
            missing devices          | version: v1\\nvgpu-configs: {a: [{vgpu-devices: {}}]}                            | vgpu-configs.a[0].devices: missing
            missing vgpu-devices     | version: v1\\nvgpu-configs: {a: [{devices: all}]}                                | vgpu-configs.a[0].vgpu-devices: missing
            null vgpu-devices        | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: }]}                | vgpu-configs.a[0].vgpu-devices: expected a mapping
            devices some text        | version: v1\\nvgpu-configs: {a: [{devices: some, vgpu-devices: {}}]}             | vgpu-configs.a[0].devices: expected "all" or a list
            negative index           | version: v1\\nvgpu-configs: {a: [{devices: [0, -1], vgpu-devices: {}}]}          | vgpu-configs.a[0].devices[1]: the number -1 is not a GPU index
            text index               | version: v1\\nvgpu-configs: {a: [{devices: ["0"], vgpu-devices: {}}]}            | vgpu-configs.a[0].devices[0]: "0" is not a GPU index
            bad filter               | version: v1\\nvgpu-configs: {a: [{devices: all, device-filter: L40S, vgpu-devices: {}}]} | vgpu-configs.a[0].device-filter: "L40S" is not a device id
            bad filter in list       | version: v1\\nvgpu-configs: {a: [{devices: all, device-filter: ["0x26B910DE", "0x1FFFFFFFF"], vgpu-devices: {}}]} | vgpu-configs.a[0].device-filter[1]: "0x1FFFFFFFF" is not a device id
            empty filter list        | version: v1\\nvgpu-configs: {a: [{devices: all, device-filter: [], vgpu-devices: {}}]} | vgpu-configs.a[0].device-filter: an empty list
            negative count           | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {L40S-4Q: -1}}]}   | vgpu-configs.a[0].vgpu-devices.L40S-4Q: the number -1 is not a count
            text count               | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {L40S-4Q: "4"}}]}  | vgpu-configs.a[0].vgpu-devices.L40S-4Q: "4" is not a count
            huge count               | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {L40S-4Q: 70000}}]} | vgpu-configs.a[0].vgpu-devices.L40S-4Q: the number 70000 is not a count
            number as profile        | version: v1\\nvgpu-configs: {a: [{devices: all, vgpu-devices: {12: 1}}]}         | vgpu-configs.a[0].vgpu-devices.12: a profile name is text
            bare profile entry       | version: v1\\nvgpu-configs: {a: ["T4-8Q"]}                                       | vgpu-configs.a[0]: "T4-8Q" is a bare profile name
            entry not a mapping      | version: v1\\nvgpu-configs: {a: [3]}                                             | vgpu-configs.a[0]: expected a mapping
            layout not a list        | version: v1\\nvgpu-configs: {a: {devices: all}}                                  | vgpu-configs.a: expected a list of entries
            duplicate key            | version: v1\\nversion: v1                                                        | not valid YAML
            not yaml                 | version: [v1                                                                     | not valid YAML: line
            not a mapping            | - v1                                                                             | (the file): expected a mapping
            empty                    | ' '                                                                              | the file is empty
            """)
    void refusesNamingTheField(String what, String text, String message) {
        assertThatThrownBy(() -> VgpuConfigFile.parse(text.replace("\\n", "\n")))
                .isInstanceOf(InvalidVgpuConfigException.class).hasMessageContaining(message);
    }

    @Test
    void anExceptionKeepsPathAndProblemApart() {
        assertThatThrownBy(() -> VgpuConfigFile.parse("version: v1\nvgpu-configs: {a: [{devices: all}]}"))
                .isInstanceOfSatisfying(InvalidVgpuConfigException.class, e -> {
                    assertThat(e.path()).isEqualTo("vgpu-configs.a[0].vgpu-devices");
                    assertThat(e.problem()).isEqualTo("missing");
                });
    }

    @Test
    void anUnknownLayoutNameListsTheNamesThereAre() throws Exception {
        VgpuConfigFile file = VgpuConfigFile.parse(EXAMPLE);

        assertThatThrownBy(() -> file.select("defualt")).isInstanceOf(InvalidVgpuConfigException.class)
                .hasMessage("vgpu-configs: no layout is called \"defualt\" (the file has \"default\", \"empty\","
                        + " \"per-card\")");
    }

    @Test
    void aliasBombsAndDeepNestingAreRefusedNotRun() {
        StringBuilder bomb = new StringBuilder("version: v1\na: &a [x, x]\n");
        for (int i = 0; i < 12; i++) {
            bomb.append("b").append(i).append(": &b").append(i).append(" [*").append(i == 0 ? "a" : "b" + (i - 1))
                    .append(", *").append(i == 0 ? "a" : "b" + (i - 1)).append("]\n");
        }
        assertThatThrownBy(() -> VgpuConfigFile.parse(bomb.toString())).isInstanceOf(InvalidVgpuConfigException.class)
                .hasMessageContaining("not valid YAML");
        assertThatThrownBy(() -> VgpuConfigFile.parse("[".repeat(100_000))).isInstanceOf(
                InvalidVgpuConfigException.class).hasMessageContaining("not valid YAML");
    }

    @Test
    void readsAFileAndRefusesWhatIsNoFile() throws IOException {
        Path good = Files.writeString(dir.resolve("good.yaml"), EXAMPLE);
        assertThat(assertParses(good).configs()).hasSize(3);

        assertRefused(dir.resolve("missing.yaml"), "the file does not exist");
        assertRefused(dir, "it is a directory, not a file");
        Path large = Files.writeString(dir.resolve("large.yaml"), EXAMPLE + "#" + "x".repeat(VgpuConfigFile.MAX_BYTES));
        assertRefused(large, "the file is larger than 1048576 bytes");
        Path latin1 = Files.write(dir.resolve("latin1.yaml"), "version: v1 # caf\u00e9".getBytes(
                StandardCharsets.ISO_8859_1));
        assertRefused(latin1, "the file is not UTF-8 text");
        assertThatThrownBy(() -> VgpuConfigFile.parse(EXAMPLE + "#" + "x".repeat(VgpuConfigFile.MAX_BYTES)))
                .hasMessage("the text is larger than 1048576 bytes");
    }

    private static VgpuConfigFile assertParses(Path file) {
        try {
            return VgpuConfigFile.read(file);
        } catch (InvalidVgpuConfigException e) {
            throw new AssertionError(e);
        }
    }

    private static void assertRefused(Path file, String message) {
        assertThatThrownBy(() -> VgpuConfigFile.read(file)).isInstanceOf(InvalidVgpuConfigException.class)
                .hasMessage(message);
    }

    @Test
    void valuesCheckWhatTheParserChecks() {
        assertThatThrownBy(() -> new VgpuConfigSpec("p", Optional.of(new TreeSet<>(Set.of(-1))), new TreeSet<>(),
                Map.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new VgpuConfigSpec("p", Optional.empty(), new TreeSet<>(), Map.of("x", -1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new VgpuLayout("a", List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
