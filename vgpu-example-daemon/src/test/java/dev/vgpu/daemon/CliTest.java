package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vgpu.daemon.cli.HelpText;
import dev.vgpu.daemon.scan.PciIdsDatabase;
import dev.vgpu.testing.SysfsTree;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CliTest {

    @TempDir
    Path tmp;

    record Result(int code, String out, String err) {
    }

    static Result run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = VgpuDaemon.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static Result run(String... args) {
        return run(Map.of(), args);
    }

    @Test
    void discoverPrintsTheJsonContractForTheH200Sample() throws Exception {
        Result r = run("discover", "--sample", "h200-sriov", "--format", "json", "--no-nvml");
        assertThat(r.code()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        List<String> names = new ArrayList<>();
        doc.get("resources").forEach(n -> names.add(n.get("resource").asText()));
        assertThat(names).containsExactly("nvidia.com/GH100_H100_PCIE", "nvidia.com/NVIDIA_H200X-1-18C",
                "nvidia.com/NVIDIA_H200X-2-35C");
        JsonNode profile = doc.get("resources").get(1);
        assertThat(profile.get("source").asText()).isEqualTo("vendor-vfio");
        assertThat(profile.get("devices").toString()).isEqualTo("[{\"id\":\"0000:1b:00.4\",\"numaNode\":0,"
                + "\"iommuGroup\":\"100\",\"parent\":\"0000:1b:00.0\"},{\"id\":\"0000:1b:00.5\",\"numaNode\":0,"
                + "\"iommuGroup\":\"101\",\"parent\":\"0000:1b:00.0\"}]");
        JsonNode passthrough = doc.get("resources").get(0).get("devices").get(0);
        assertThat(passthrough.has("parent")).as("passthrough devices have no parent").isFalse();
        assertThat(doc.get("skipped")).hasSize(1);
        JsonNode skip = doc.get("skipped").get(0);
        assertThat(skip.get("id").asText()).isEqualTo("0000:9b:00.4");
        assertThat(skip.get("source").asText()).isEqualTo("vendor-vfio");
        assertThat(skip.get("reason").asText()).contains("1428");
        assertThat(r.out().strip()).as("stdout carries the JSON document and nothing else")
                .startsWith("{").endsWith("}");
    }

    @Test
    void discoverOmitsUnknownNumaAndPrintsMdevParents() throws Exception {
        Result r = run("discover", "--sample", "a10-mdev", "--format", "json", "--no-nvml");
        assertThat(r.code()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        assertThat(doc.get("resources").get(0).get("resource").asText()).isEqualTo("nvidia.com/NVIDIA_A10-12Q");
        JsonNode device = doc.get("resources").get(1).get("devices").get(0);
        assertThat(device.get("id").asText()).isEqualTo("aa618089-8b16-4d01-a136-25a0f3c73123");
        assertThat(device.get("parent").asText()).isEqualTo("0000:06:00.0");
        assertThat(doc.get("resources").get(1).get("source").asText()).isEqualTo("mdev");

        JsonNode passthrough = new ObjectMapper().readTree(run("discover", "--sample", "passthrough", "--format",
                "json", "--no-nvml").out());
        JsonNode grace = passthrough.get("resources");
        List<String> names = new ArrayList<>();
        grace.forEach(n -> names.add(n.get("resource").asText()));
        // the H100's audio function shares its IOMMU group: handed over with the GPU, not advertised on its own
        assertThat(names).containsExactly("nvidia.com/GH100_H100_PCIE", "nvidia.com/GH100_H200_SXM_141GB");
        assertThat(passthrough.get("skipped")).hasSize(2);
        assertThat(passthrough.get("skipped").get(0).get("id").asText()).isEqualTo("0000:41:00.1");
        assertThat(passthrough.get("skipped").get(0).get("reason").asText()).contains("advertised as 0000:41:00.0");
        // the L40S left on the nvidia driver: one skip, naming the driver and the fix
        assertThat(passthrough.get("skipped").get(1).get("id").asText()).isEqualTo("0000:e1:00.0");
        assertThat(passthrough.get("skipped").get(1).get("reason").asText()).contains("bound to nvidia",
                "bind it to vfio-pci");
        assertThat(grace.get(1).get("devices").get(0).has("numaNode")).as("numa_node -1 is omitted").isFalse();
    }

    @Test
    void discoverTableListsResourcesAndSkips() {
        Result r = run("discover", "--sample", "h200-sriov", "--no-nvml");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("RESOURCE", "nvidia.com/NVIDIA_H200X-1-18C", "0000:1b:00.5",
                "3 resources, 4 devices, 1 skipped", "skipped 0000:9b:00.4 (vendor-vfio)");
    }

    @Test
    void discoverListsAHundredSkipsPerSourceAndCountsThemAll() throws Exception {
        Path bus = Files.createDirectories(tmp.resolve("host/sys/bus/pci/devices"));
        for (int i = 0; i < 1000; i++) {
            String bdf = String.format("0000:%02x:%02x.%d", i >> 8, i >> 3 & 0x1f, i & 7);
            Files.createSymbolicLink(bus.resolve(bdf), Path.of("../../../devices/gone/" + bdf));
        }

        Result r = run("discover", "--host-root", tmp.resolve("host").toString(), "--format", "json", "--no-nvml");

        assertThat(r.code()).isZero();
        JsonNode doc = new ObjectMapper().readTree(r.out());
        assertThat(doc.get("skipped")).hasSize(200);
        assertThat(doc.get("skippedCount").asInt()).isEqualTo(2000);
        assertThat(doc.get("resources")).isEmpty();
        assertThat(run("discover", "--host-root", tmp.resolve("host").toString(), "--no-nvml").out())
                .contains("0 resources, 0 devices, 2000 skipped (200 listed)");
    }

    @Test
    void discoverReadsTheStateDirectoryAndNeverWritesIt() throws Exception {
        Path root = tmp.resolve("host");
        SysfsTree tree = SysfsTree.at(root).nvidiaDriverVersion("550.54.14");
        tree.sriovCard("0000:1b:00.0", 0x26b9).virtualFunctions(1, 100).catalog(Map.of()).create();
        tree.configureVf("0000:1b:00.4", 1152);
        Path state = Files.createDirectories(tmp.resolve("state"));
        // A name for the card on the host, and one for a card that is gone, which a writing scan would drop.
        String text = "vgpu-vendor-vfio-names v1\n"
                + "0000:1b:00.0\t26b9\t550.54.14\t1152\tNVIDIA L40S-1Q\n"
                + "0000:3b:00.0\t26b9\t550.54.14\t1152\tNVIDIA L40S-1Q\n";
        Files.writeString(state.resolve("vendor-vfio-names.v1"), text);

        Result flag = run("discover", "--host-root", root.toString(), "--format", "json", "--no-nvml",
                "--state-dir", state.toString());
        Result env = run(Map.of("VGPU_STATE_DIR", state.toString()), "discover", "--host-root", root.toString(),
                "--format", "json", "--no-nvml");
        Result off = run(Map.of("VGPU_STATE_DIR", state.toString()), "discover", "--host-root", root.toString(),
                "--format", "json", "--no-nvml", "--state-dir", "");

        for (Result named : List.of(flag, env)) {
            assertThat(named.code()).isZero();
            JsonNode resource = new ObjectMapper().readTree(named.out()).get("resources").get(0);
            assertThat(resource.get("resource").asText()).isEqualTo("nvidia.com/NVIDIA_L40S-1Q");
            assertThat(resource.get("devices").get(0).get("id").asText()).isEqualTo("0000:1b:00.4");
        }
        assertThat(new ObjectMapper().readTree(off.out()).get("resources")).isEmpty();
        assertThat(Files.readString(state.resolve("vendor-vfio-names.v1"))).isEqualTo(text);
        try (var files = Files.list(state)) {
            assertThat(files).hasSize(1);
        }
        run("discover", "--host-root", root.toString(), "--no-nvml", "--state-dir", tmp.resolve("none").toString());
        assertThat(tmp.resolve("none")).doesNotExist();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "flag | .           | is the --device-plugin-dir",
        "flag | vgpu        | is inside the --device-plugin-dir",
        "flag | a/../vgpu/x | is inside the --device-plugin-dir",
        "env  | .           | is the --device-plugin-dir",
        "link | vgpu        | is inside the --device-plugin-dir",
    })
    void serveRefusesAStateDirectoryInsideTheDevicePluginDirectoryNamingBoth(String how, String under, String says)
            throws Exception {
        Path plugins = Files.createDirectories(tmp.resolve("device-plugins"));
        Path base = how.equals("link") ? Files.createSymbolicLink(tmp.resolve("link"), plugins) : plugins;
        String state = base.resolve(under).toString();
        Map<String, String> env = how.equals("env") ? Map.of("VGPU_STATE_DIR", state) : Map.of();
        List<String> args = new ArrayList<>(List.of("serve", "--host-root", tmp.toString(), "--device-plugin-dir",
                plugins.toString(), "--no-nvml"));
        if (!how.equals("env")) {
            args.addAll(List.of("--state-dir", state));
        }

        Result r = run(env, args.toArray(String[]::new));

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains(how.equals("env") ? "VGPU_STATE_DIR " : "--state-dir ", state, says,
                plugins.toString(), "which the kubelet empties when it restarts").doesNotContain("Usage:");
        assertThat(plugins.resolve("vgpu")).doesNotExist();
    }

    @Test
    void serveRefusesAStateDirectoryThatIsAFileAndAnEmptyFlagTurnsTheVariableOff() throws Exception {
        Path plugins = Files.createDirectories(tmp.resolve("device-plugins"));
        Path file = Files.writeString(tmp.resolve("state"), "");
        Result notDir = run("serve", "--host-root", tmp.toString(), "--device-plugin-dir", plugins.toString(),
                "--no-nvml", "--state-dir", file.toString());
        assertThat(notDir.code()).isEqualTo(2);
        assertThat(notDir.err()).contains("--state-dir " + file + " is not a directory");

        // The variable names the plugin directory, the empty flag wins: what stops serve is the next check.
        Result off = run(Map.of("VGPU_STATE_DIR", plugins.toString()), "serve", "--host-root", tmp.toString(),
                "--device-plugin-dir", plugins.toString(), "--no-nvml", "--state-dir", "",
                "--metrics-address", "nope");
        assertThat(off.code()).isEqualTo(2);
        assertThat(off.err()).startsWith("invalid --metrics-address value").doesNotContain("the kubelet empties");
    }

    @Test
    void discoverOnAHostRootWithoutSysFailsWithExitOneSayingWhyInWords() {
        Result r = run("discover", "--host-root", tmp.toString(), "--no-nvml");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains("the scan failed", "failed: source passthrough: ",
                "sys/bus/pci/devices is missing under the host root " + tmp,
                "no PCI functions listed (sys/bus/pci/devices cannot be read), 0 advertised, 0 skipped");
        assertThat(r.out() + r.err()).as("no Java class names").doesNotContain("SharedRead", "Exception", "$");

        Result json = run("discover", "--host-root", tmp.toString(), "--no-nvml", "--format", "json");
        assertThat(json.code()).isEqualTo(1);
        assertThat(json.out().strip()).startsWith("{").endsWith("}");
        assertThat(json.err()).contains("discover: source vendor-vfio failed: ");
    }

    @Test
    void discoverOnAHostWithoutNvidiaFunctionsSaysWhatItSaw() {
        SysfsTree host = SysfsTree.at(tmp);
        host.function("0000:00:1f.0", 0x8086, 0x7a84).driver("lpc_ich").create();
        host.function("0000:3b:00.0", 0x15b3, 0x101d).driver("mlx5_core").create();

        Result r = run("discover", "--host-root", tmp.toString(), "--no-nvml");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("(no devices to advertise)", "0 resources, 0 devices, 0 skipped",
                "2 PCI functions, 0 NVIDIA, 0 advertised, 0 skipped");

        Result json = run("discover", "--host-root", tmp.toString(), "--no-nvml", "--format", "json");
        assertThat(json.out()).doesNotContain("PCI functions");
        assertThat(json.err()).contains("2 PCI functions, 0 NVIDIA, 0 advertised, 0 skipped");
    }

    @Test
    void unknownSampleAndMissingRootAreUsageErrors() {
        Result sample = run("discover", "--sample", "h100-nope");
        assertThat(sample.code()).isEqualTo(2);
        assertThat(sample.err()).contains("unknown sample \"h100-nope\"", "h200-sriov");
        Result root = run("discover", "--host-root", tmp.resolve("missing").toString());
        assertThat(root.code()).isEqualTo(2);
        assertThat(root.err()).contains("--host-root", "is not a directory");
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "serve --help", "discover --help", "demo --help"})
    void helpDescribesEveryCommand(String args) {
        Result r = run(args.split(" "));
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("Usage:");
    }

    @Test
    void topLevelHelpListsTheSubcommandsAndServeHelpTheContractFlags() {
        assertThat(run("--help").out()).contains("serve", "discover", "demo");
        assertThat(run("serve", "--help").out()).contains("--host-root", "--device-plugin-dir", "--pci-ids",
                "--rescan-interval", "--nvml-library", "--no-nvml", "VFIO_VGPU_RESCAN_INTERVAL", "--state-dir",
                "VGPU_STATE_DIR");
        assertThat(run("discover", "--help").out()).contains("--format", "--sample", "--host-root", "--pci-ids",
                "--sources", "--state-dir");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "abc     | time: invalid duration \"abc\"",
        "30      | time: missing unit in duration \"30\"",
        "1d      | time: unknown unit \"d\" in duration \"1d\"",
        "-5s     | negative duration",
        "30 s    | time: ",
    })
    void malformedRescanIntervalFromTheEnvironmentExitsTwoNamingTheVariable(String value, String message) {
        Result r = run(Map.of("VFIO_VGPU_RESCAN_INTERVAL", value), "serve", "--host-root", tmp.toString(),
                "--device-plugin-dir", tmp.toString(), "--no-nvml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("VFIO_VGPU_RESCAN_INTERVAL", message);
    }

    @Test
    void theFlagOverridesTheEnvironmentAndIsNamedInItsError() {
        Result r = run(Map.of("VFIO_VGPU_RESCAN_INTERVAL", "30s"), "--rescan-interval", "5x",
                "--host-root", tmp.toString(), "--device-plugin-dir", tmp.toString(), "--no-nvml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--rescan-interval", "unknown unit \"x\"").doesNotContain("VFIO_VGPU_RESCAN_INTERVAL value");
    }

    @Test
    void serveRefusesAMissingDevicePluginDirectory() {
        Result r = run("serve", "--host-root", tmp.toString(), "--device-plugin-dir", tmp.resolve("nope").toString(),
                "--no-nvml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--device-plugin-dir");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "''                      | serve",
        "--host-root /x          | serve --host-root /x",
        "discover                | discover",
        "--help                  | --help",
        "-V                      | -V",
    })
    void serveIsTheDefaultSubcommand(String given, String expected) {
        String[] args = given.isEmpty() ? new String[0] : given.split(" ");
        assertThat(String.join(" ", VgpuDaemon.withDefaultSubcommand(args))).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--metrics-address | nope           | invalid --metrics-address value \"nope\"",
        "--metrics-address | 127.0.0.1:99999 | invalid --metrics-address value",
        "--metrics-address | ::1:0          | use HOST:PORT, :PORT or [IPv6]:PORT",
        "--scan-deadline   | 0s             | invalid --scan-deadline value \"0s\"",
        "--scan-deadline   | 5x             | invalid --scan-deadline value",
    })
    void malformedOperationsFlagsExitTwoNamingTheFlag(String flag, String value, String message) {
        Result r = run("serve", "--host-root", tmp.toString(), "--device-plugin-dir", tmp.toString(), "--no-nvml",
                flag, value);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains(message);
    }

    @Test
    void aMalformedMetricsAddressInTheEnvironmentNamesTheVariable() {
        Result r = run(Map.of("VGPU_METRICS_ADDRESS", "localhost"), "serve", "--host-root", tmp.toString(),
                "--device-plugin-dir", tmp.toString(), "--no-nvml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("invalid VGPU_METRICS_ADDRESS value \"localhost\"");
    }

    @Test
    void aMetricsPortThatIsTakenExitsTwoSayingWhy() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getLoopbackAddress())) {
            Result r = run("serve", "--host-root", tmp.toString(), "--device-plugin-dir", tmp.toString(), "--no-nvml",
                    "--metrics-address", "127.0.0.1:" + taken.getLocalPort());
            assertThat(r.code()).isEqualTo(2);
            assertThat(r.err()).contains("cannot listen on", "for metrics and probes", "Address already in use");
        }
    }

    @Test
    void anExplicitPciIdsFileThatIsMissingOrADirectoryStopsEveryCommandNamingTheFlagWithoutUsage() throws Exception {
        String missing = tmp.resolve("gone/pci.ids").toString();
        for (String[] args : List.of(
                new String[] {"serve", "--host-root", tmp.toString(), "--device-plugin-dir", tmp.toString(),
                    "--no-nvml", "--pci-ids", missing},
                new String[] {"discover", "--host-root", tmp.toString(), "--no-nvml", "--pci-ids", missing},
                new String[] {"demo", "--no-nvml", "--pci-ids", missing})) {
            Result r = run(args);
            assertThat(r.code()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).contains("--pci-ids " + missing + " does not exist", "passthrough resource names")
                    .doesNotContain("Usage:");
        }
        Result dir = run("discover", "--host-root", tmp.toString(), "--no-nvml", "--pci-ids", tmp.toString());
        assertThat(dir.code()).isEqualTo(2);
        assertThat(dir.err()).contains("--pci-ids " + tmp + " is a directory");
    }

    @Test
    void anEmptyPciIdsFileIsValidAndGivesNumericNames() throws Exception {
        Path empty = java.nio.file.Files.createFile(tmp.resolve("pci.ids"));
        Result r = run("discover", "--sample", "passthrough", "--format", "json", "--no-nvml", "--pci-ids",
                empty.toString());
        assertThat(r.code()).as(r.err()).isZero();
        List<String> names = new ArrayList<>();
        new ObjectMapper().readTree(r.out()).get("resources").forEach(n -> names.add(n.get("resource").asText()));
        assertThat(names).containsExactly("nvidia.com/2331", "nvidia.com/2335");
    }

    @Test
    void anExplicitNvmlLibraryThatIsMissingStopsNamingTheFlag() {
        String missing = tmp.resolve("libnvidia-ml.so.1").toString();
        Result r = run("discover", "--host-root", tmp.toString(), "--nvml-library", missing);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--nvml-library " + missing + " does not exist").doesNotContain("Usage:");
    }

    @Test
    void withoutPciIdsAndWithoutASystemFileTheBundledNvidiaSectionNamesPassthroughGpus() {
        PciIdsDatabase none = PciIdsDatabase.firstOrBundled(List.of(tmp.resolve("a"), tmp.resolve("b")));
        assertThat(none.description()).isEqualTo("bundled NVIDIA section, version 2025.07.11 + 2026.08.22");
        assertThat(none.names().deviceName("10de", "2335")).contains("GH100 [H200 SXM 141GB]");
        assertThat(none.names().deviceName("10de", "26b9")).contains("AD102GL [L40S]");
        assertThat(none.names().deviceName("8086", "1572")).as("only NVIDIA is bundled").isEmpty();
    }

    @Test
    void aSystemPciIdsFileWinsOverTheBundledSectionAndItsVersionIsSaid() throws Exception {
        Path file = tmp.resolve("pci.ids");
        java.nio.file.Files.writeString(file, "#\n#\tVersion: 2020.01.01\n#\n10de  NVIDIA Corporation\n"
                + "\t2331  Old name\n");
        PciIdsDatabase db = PciIdsDatabase.firstOrBundled(List.of(tmp.resolve("missing"), file));
        assertThat(db.description()).isEqualTo(file + " (version 2020.01.01)");
        assertThat(db.names().deviceName("10de", "2331")).contains("Old name");
    }

    @Test
    void versionSaysTheBuildThePciIdsVersionAndTheJavaRuntime() {
        Result r = run("--version");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("vgpu-daemon (development build)",
                "pci.ids: bundled NVIDIA section version 2025.07.11 + 2026.08.22",
                "Java runtime: " + System.getProperty("java.runtime.version"));
    }

    @Test
    void sourcesFromTheFlagOrTheEnvironmentRestrictTheScan() throws Exception {
        Result flag = run(Map.of("VGPU_SOURCES", "mdev"), "discover", "--sample", "h200-sriov", "--format", "json",
                "--no-nvml", "--sources", "passthrough");
        assertThat(flag.code()).as(flag.err()).isZero();
        List<String> sources = new ArrayList<>();
        new ObjectMapper().readTree(flag.out()).get("resources").forEach(n -> sources.add(n.get("source").asText()));
        assertThat(sources).containsExactly("passthrough");

        Result env = run(Map.of("VGPU_SOURCES", " vendor-vfio , "), "discover", "--sample", "h200-sriov",
                "--format", "json", "--no-nvml");
        assertThat(env.code()).as(env.err()).isZero();
        List<String> fromEnv = new ArrayList<>();
        new ObjectMapper().readTree(env.out()).get("resources").forEach(n -> fromEnv.add(n.get("source").asText()));
        assertThat(fromEnv).containsOnly("vendor-vfio").hasSize(2);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--sources passthrough,gpu-magic | ''             | unknown source \"gpu-magic\" in --sources",
        "''                              | mdev,nope      | unknown source \"nope\" in VGPU_SOURCES",
    })
    void anUnknownSourceStopsServeAndDiscoverNamingIt(String flag, String env, String message) {
        for (String command : List.of("serve", "discover")) {
            List<String> args = new ArrayList<>(List.of(command, "--host-root", tmp.toString(), "--no-nvml"));
            if (command.equals("serve")) {
                args.addAll(List.of("--device-plugin-dir", tmp.toString()));
            }
            if (!flag.isEmpty()) {
                args.addAll(List.of(flag.split(" ")));
            }
            Result r = run(env.isEmpty() ? Map.of() : Map.of("VGPU_SOURCES", env), args.toArray(String[]::new));
            assertThat(r.code()).isEqualTo(2);
            assertThat(r.err()).contains(message, "mdev, passthrough, vendor-vfio").doesNotContain("Usage:");
        }
    }

    @Test
    void usageHelpIsPrintedForUsageErrorsOnly() {
        Result unknown = run("discover", "--colour");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("Unknown option: '--colour'", "Usage: vgpu-daemon discover");
        Result dir = run("serve", "--host-root", tmp.toString(), "--device-plugin-dir", tmp.resolve("x").toString(),
                "--no-nvml");
        assertThat(dir.err()).contains("--device-plugin-dir").doesNotContain("Usage:");
        Result env = run(Map.of("VFIO_VGPU_RESCAN_INTERVAL", "soon"), "serve", "--host-root", tmp.toString(),
                "--device-plugin-dir", tmp.toString(), "--no-nvml");
        assertThat(env.err()).contains("VFIO_VGPU_RESCAN_INTERVAL").doesNotContain("Usage:");
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "serve --help", "discover --help", "demo --help"})
    void helpWrapsAtWordBoundariesAndKeepsFileNamesWhole(String args) {
        String help = run(args.split(" ")).out();
        for (String line : help.split("\n")) {
            assertThat(line.length() <= HelpText.WIDTH || !line.strip().contains(" "))
                    .as("line over %d columns: %s", HelpText.WIDTH, line).isTrue();
        }
        if (!args.equals("--help")) {
            assertThat(help).contains("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "libnvidia-ml.so.1");
        }
    }

    @Test
    void wrappingContinuesOptionTextUnderItsColumn() {
        String row = "      --pci-ids=FILE        " + "word ".repeat(20).strip() + " /usr/share/hwdata/pci.ids end";
        String wrapped = HelpText.wrap(row, 60);
        assertThat(wrapped.lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(60));
        assertThat(wrapped).contains("\n                              ").contains("/usr/share/hwdata/pci.ids");
        assertThat(HelpText.wrap("short", 60)).isEqualTo("short");
        assertThat(HelpText.wrap("a " + "x".repeat(70), 60)).isEqualTo("a\n" + "x".repeat(70));
    }

    @Test
    void demoOffersOnlyWhatDemoUses() {
        String help = run("demo", "--help").out();
        assertThat(help).contains("--pci-ids", "--nvml-library", "--no-nvml")
                .doesNotContain("--host-root", "--sources", "--device-plugin-dir", "--rescan-interval");
    }
}
