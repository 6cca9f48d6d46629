package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.daemon.CliTest.Result;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.CliParser;
import dev.vgpu.daemon.cli.HelpText;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.discover.DiscoverCommand;
import dev.vgpu.daemon.scan.ConfigOption;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.ScanOptions;
import dev.vgpu.daemon.serve.ServeOptions;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The command-line parser against the daemon's own option tables, and what {@link VgpuDaemon#run} makes of it. */
class CliParserTest {

    @TempDir
    Path tmp;

    private static CliParser.Parsed parse(String... args) {
        return CliParser.parse(VgpuDaemon.COMMANDS, args);
    }

    private static UsageError refused(String... args) {
        try {
            CliParser.Parsed parsed = parse(args);
            throw new AssertionError("parsed: " + parsed.request() + " " + parsed.command().name());
        } catch (UsageError e) {
            return e;
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--format=json     | json",
        "--format json     | json",
        "--format JSON     | json",
        "--format=KubeVirt | kubevirt",
        "''                | table",
    })
    void bothValueSyntaxesAndAnyCaseOfAChoiceGiveTheSameValue(String given, String format) {
        List<String> args = new java.util.ArrayList<>(List.of("discover"));
        if (!given.isEmpty()) {
            args.addAll(List.of(given.split(" ")));
        }
        CliParser.Parsed parsed = parse(args.toArray(String[]::new));

        assertThat(parsed.request()).isEqualTo(CliParser.Request.RUN);
        assertThat(parsed.args().text(DiscoverCommand.FORMAT)).isEqualTo(format);
        assertThat(parsed.args().has(DiscoverCommand.FORMAT)).isEqualTo(!given.isEmpty());
    }

    @Test
    void aValueMayStartWithADashUnlessItIsAnOptionOfTheCommand() {
        assertThat(parse("serve", "--rescan-interval", "-5s").args().text(ServeOptions.RESCAN_INTERVAL))
                .isEqualTo("-5s");
        assertThat(parse("serve", "--metrics-address", "").args().text(ServeOptions.METRICS_ADDRESS)).isEmpty();
        assertThat(refused("discover", "--format", "--no-nvml").getMessage())
                .isEqualTo("Missing value for option '--format' (FORMAT)");
        assertThat(refused("discover", "--format", "--help").getMessage())
                .isEqualTo("Missing value for option '--format' (FORMAT)");
    }

    @Test
    void aMissingValueAtTheEndNamesTheOptionAndItsLabel() {
        UsageError e = refused("discover", "--host-root");
        assertThat(e.getMessage()).isEqualTo("Missing value for option '--host-root' (DIR)");
        assertThat(e.command()).isSameAs(DiscoverCommand.TABLE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"--format json --format table", "--format=json --format=json", "--no-nvml --no-nvml",
        "--config= --config=x"})
    void anOptionGivenTwiceIsAUsageError(String args) {
        String[] all = ("discover " + args).split(" ");
        String name = all[1].contains("=") ? all[1].substring(0, all[1].indexOf('=')) : all[1];
        assertThat(refused(all).getMessage()).isEqualTo("Option '" + name + "' is given twice: give it once");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "discover | --formt             | --format",
        "discover | --host-roots=/x     | --host-root",
        "serve    | --nvml              | --no-nvml, --nvml-library",
        "serve    | --metrics-adress    | --metrics-address",
        "kubelet  | --device-plugin-dr  | --device-plugin-dir",
    })
    void anUnknownOptionNamesItAndTheClosestKnownNames(String command, String typed, String suggested) {
        UsageError e = refused(command, typed);
        String name = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
        assertThat(e.getMessage()).isEqualTo("Unknown option: '" + name + "'\nPossible solutions: " + suggested);
    }

    @ParameterizedTest
    @ValueSource(strings = {"--colour", "-x", "--zzz"})
    void anUnknownOptionFarFromEveryNameGetsNoSuggestion(String typed) {
        assertThat(refused("discover", typed).getMessage()).isEqualTo("Unknown option: '" + typed + "'");
    }

    @Test
    void anUnknownOptionExitsTwoWithTheMessageAndTheCommandsUsageHelp() {
        Result r = CliTest.run("discover", "--formt", "json");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("Unknown option: '--formt'\nPossible solutions: --format\n"
                + "Usage: vgpu-daemon discover ");
        assertThat(r.out()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--no-nvml=x     | ",
        "--no-nvml=      | ",
        "--no-nvml=yes   | ",
        "--no-nvml=true  | true",
        "--no-nvml=TRUE  | true",
        "--no-nvml=false | false",
        "--no-nvml       | true",
    })
    void aFlagTakesNoValueButTrueOrFalse(String given, Boolean value) {
        if (value == null) {
            assertThat(refused("discover", given).getMessage()).startsWith("Invalid value for option '--no-nvml': '"
                    + given.substring("--no-nvml=".length()) + "' (it is a flag: give --no-nvml alone)");
        } else {
            assertThat(parse("discover", given).args().flag(HostOptions.NO_NVML)).isEqualTo(value);
        }
    }

    @Test
    void aFlagIsOffUnlessGiven() {
        assertThat(parse("discover").args().flag(HostOptions.NO_NVML)).isFalse();
        assertThat(HostOptions.of(parse("demo", "--no-nvml").args()).noNvml()).isTrue();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--help                          | HELP    | ",
        "-h                              | HELP    | ",
        "--version                       | VERSION | ",
        "-V                              | VERSION | ",
        "serve --help                    | HELP    | serve",
        "discover -h                     | HELP    | discover",
        "demo --version                  | VERSION | demo",
        "kubelet -V                      | VERSION | kubelet",
        "kubelet --help                  | HELP    | kubelet",
        "discover --format json -h --colour | HELP | discover",
    })
    void helpAndVersionWorkAtEveryLevelAndEndTheParsing(String args, CliParser.Request request, String command) {
        CliParser.Parsed parsed = parse(args.split(" "));
        assertThat(parsed.request()).isEqualTo(request);
        assertThat(parsed.command() == null ? null : parsed.command().name()).isEqualTo(command);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-V", "--version", "serve -V", "discover --version", "demo -V", "kubelet --version",
        "--host-root /x --version"})
    void versionPrintsTheVersionLinesAndExitsZero(String args) {
        Result r = CliTest.run(args.split(" "));
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("vgpu-daemon (development build)\npci.ids: bundled NVIDIA section version ")
                .contains("Java runtime: ");
        assertThat(r.err()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "-h              | Usage: vgpu-daemon [-h|-V] [COMMAND]",
        "serve -h        | Usage: vgpu-daemon serve [-h|-V]",
        "--host-root=/ -h | Usage: vgpu-daemon serve [-h|-V]",
        "discover --help | Usage: vgpu-daemon discover [-h|-V]",
        "demo -h         | Usage: vgpu-daemon demo [-h|-V]",
        "kubelet -h      | Usage: vgpu-daemon kubelet [-h|-V] --device-plugin-dir=DIR",
    })
    void helpPrintsTheUsageOfItsLevelToStdoutAndExitsZero(String args, String firstLine) {
        Result r = CliTest.run(args.split(" "));
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith(firstLine).contains("  -h, --help ", "  -V, --version ");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void theHelpOfEachCommandListsEveryRowOfItsTableWithItsDefault() {
        for (CliCommand command : VgpuDaemon.COMMANDS) {
            String help = HelpText.of(command);
            for (CliOption option : command.options()) {
                assertThat(help).as(command.name()).contains("      " + option.synopsis());
                if (option.defaultValue() != null) {
                    // Wrapped lines joined again: a default may be wrapped onto the next line.
                    assertThat(help.replaceAll("\\s+", " ")).contains("(default: " + option.defaultValue() + ")");
                }
            }
            assertThat(help).doesNotContain("${");
        }
        assertThat(VgpuDaemon.help(null)).contains("  serve ", "  discover ", "  demo ", "  kubelet ");
    }

    @Test
    void everyOptionWithAnEnvironmentVariableNamesItInItsHelp() {
        int withEnv = 0;
        for (CliCommand command : VgpuDaemon.COMMANDS) {
            for (CliOption option : command.options()) {
                if (option.env() != null) {
                    withEnv++;
                    assertThat(option.description()).as(option.name()).contains(option.env());
                }
            }
        }
        assertThat(withEnv).as("options with a variable, serve's and discover's").isGreaterThanOrEqualTo(8);
    }

    @Test
    void anEmptyConfigValueTurnsTheFileOffOverTheVariableInBothSyntaxes() {
        Map<String, String> env = Map.of(ConfigOption.ENV, tmp.resolve("missing.yaml").toString());
        for (String[] args : List.of(new String[] {"discover", "--config="}, new String[] {"discover", "--config", ""})) {
            CliArgs parsed = parse(args).args();
            assertThat(parsed.has(ConfigOption.CONFIG)).isTrue();
            assertThat(parsed.text(ConfigOption.CONFIG)).isEmpty();
            assertThat(new ConfigOption(parsed).load(env).describe()).isEqualTo("none");
        }
        assertThatThrownBy(() -> new ConfigOption(parse("discover").args()).load(env)).isInstanceOf(Refusal.class)
                .hasMessageContaining(ConfigOption.ENV + " " + tmp.resolve("missing.yaml"));
    }

    @Test
    void aRequiredOptionThatIsMissingIsAUsageErrorNamingIt() {
        UsageError e = refused("kubelet", "--restart-every", "30s");
        assertThat(e.getMessage()).isEqualTo("Missing required option: '--device-plugin-dir=DIR'");

        Result r = CliTest.run("kubelet");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("Missing required option: '--device-plugin-dir=DIR'\n"
                + "Usage: vgpu-daemon kubelet ");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "discover stray       | stray",
        "serve --no-nvml x    | x",
        "discover -           | -",
    })
    void aStrayArgumentIsAUsageErrorNamingIt(String args, String named) {
        assertThat(refused(args.split(" ")).getMessage()).startsWith("Unexpected argument: '" + named + "'");
        Result r = CliTest.run(args.split(" "));
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("Unexpected argument: '" + named + "'", "Usage: vgpu-daemon ");
    }

    @Test
    void anUnknownCommandGetsTheTopLevelUsage() {
        UsageError e = refused("discovr");
        assertThat(e.getMessage()).isEqualTo("Unknown command: 'discovr'\nPossible solutions: discover");
        assertThat(e.command()).isNull();
        Result r = CliTest.run("discovr");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("Usage: vgpu-daemon [-h|-V] [COMMAND]", "Commands:");
    }

    @Test
    void aValueThatDoesNotConvertIsAUsageErrorNamingTheOption() {
        Result r = CliTest.run("serve", "--unhealthy-after-failed-scans", "three");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("Invalid value for option '--unhealthy-after-failed-scans': 'three' is not a"
                + " whole number\nUsage: vgpu-daemon serve ");

        Result choice = CliTest.run("discover", "--format", "xml");
        assertThat(choice.code()).isEqualTo(2);
        assertThat(choice.err()).startsWith("Invalid value for option '--format': 'xml' (use one of table, json,"
                + " kubevirt)\nUsage: vgpu-daemon discover ");
    }

    @Test
    void aRefusalPrintsItsMessageAloneWhileAUsageErrorFromACommandGetsThatCommandsHelp() {
        Result refusal = CliTest.run("discover", "--host-root", tmp.resolve("none").toString());
        assertThat(refusal.code()).isEqualTo(2);
        assertThat(refusal.err()).isEqualTo("--host-root " + tmp.resolve("none") + " is not a directory\n");

        Result usage = CliTest.run("kubelet", "--device-plugin-dir", tmp.toString(), "--restart-every", "10ms");
        assertThat(usage.code()).isEqualTo(2);
        assertThat(usage.err()).startsWith("invalid --restart-every value \"10ms\": it must be at least 1s\n"
                + "Usage: vgpu-daemon kubelet ");
    }

    @Test
    void anOptionsVariableStandsInOnlyWhenTheFlagIsNotGivenAndSaysWhereTheValueCameFrom() {
        Map<String, String> env = Map.of("VGPU_STATE_DIR", "/from/env");
        CliArgs.Given fromEnv = parse("discover").args().given(ScanOptions.STATE_DIR, env);
        assertThat(fromEnv).isEqualTo(new CliArgs.Given("/from/env", "VGPU_STATE_DIR"));
        assertThat(parse("discover", "--state-dir=/flag").args().given(ScanOptions.STATE_DIR, env))
                .isEqualTo(new CliArgs.Given("/flag", "--state-dir"));
        // An empty flag is given: it turns the variable off.
        assertThat(parse("discover", "--state-dir=").args().given(ScanOptions.STATE_DIR, env))
                .isEqualTo(new CliArgs.Given("", "--state-dir"));
        assertThat(parse("discover").args().given(ScanOptions.STATE_DIR, Map.of())).isNull();
        // A row without a variable never reads the environment; a default is not "given".
        assertThat(parse("discover").args().given(ScanOptions.HOST_ROOT, Map.of("VGPU_HOST_ROOT", "/x"))).isNull();
    }

    @Test
    void aTableDeclaringAnOptionTwiceOrAHelpOptionIsRejected() {
        CliOption a = CliOption.flag("--a", "A.");
        assertThatThrownBy(() -> new CliCommand("x", List.of("X."), List.of(a, a)))
                .hasMessageContaining("--a is declared twice");
        assertThatThrownBy(() -> new CliCommand("x", List.of("X."), List.of(CliOption.flag("--help", "H."))))
                .hasMessageContaining("--help belongs to every command already");
        assertThatThrownBy(() -> CliOption.value("-f", "F", "F.")).hasMessageContaining("--word");
        assertThatThrownBy(() -> CliOption.value("--d", "D", "D.").withDefault("x"))
                .hasMessageContaining("a default the help does not show");
    }

    @ParameterizedTest
    @CsvSource({"format,format,0", "formt,format,1", "colour,config,4", "'',abc,3", "nvml,no-nvml,3"})
    void editDistanceCountsSingleCharacterEdits(String a, String b, int distance) {
        assertThat(CliParser.editDistance(a, b)).isEqualTo(distance);
        assertThat(CliParser.editDistance(b, a)).isEqualTo(distance);
    }
}
