package dev.vgpu.daemon.discover;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.Subcommand;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.scan.ConfigOption;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.Samples;
import dev.vgpu.daemon.scan.ScanOptions;
import dev.vgpu.hostfiles.HostFiles;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code discover}: one scan, printed as a table, the JSON document of docs/ARCHITECTURE.md or the KubeVirt CR
 * fragment ({@link KubeVirtReport}), then exit 0; exit 1 when a source failed, with why in words. The summary
 * ({@link PciCensus}) ends the table; with a document on stdout it goes to stderr.
 */
public final class DiscoverCommand implements Callable<Integer> {

    /** Output formats. */
    enum Format { table, json, kubevirt }

    private static String[] formats() {
        Format[] all = Format.values();
        String[] names = new String[all.length];
        for (int i = 0; i < all.length; i++) {
            names[i] = all[i].name();
        }
        return names;
    }

    public static final CliOption FORMAT = CliOption.value("--format", "FORMAT", "table, json, or kubevirt: the"
            + " permittedHostDevices of the KubeVirt CR for what would be advertised (default: ${DEFAULT}).")
            .withDefault(Format.table.name()).withChoices(formats());
    static final CliOption SAMPLE = CliOption.value("--sample", "NAME", "Scan a sample host bundled in the jar instead"
            + " of --host-root (no state directory is read for it): " + Samples.NAMES + ".");
    /** {@code discover}'s table. */
    public static final CliCommand TABLE = new CliCommand("discover", List.of(
            "Scan once and print what would be advertised and what was skipped, with reasons.",
            "With --format json or kubevirt, stdout carries only that document; logs and the summary go to stderr.",
            "Exit code 1 when a source failed (e.g. no sys/ under --host-root), saying why.",
            "Environment: VGPU_SOURCES, VGPU_STATE_DIR, VGPU_CONFIG (the flags override them); VGPU_CONFIG_YAML (a"
                    + " configuration's text), used when neither --config nor VGPU_CONFIG names a file."),
            CliCommand.join(ScanOptions.OPTIONS, HostOptions.OPTIONS, ConfigOption.OPTIONS, List.of(FORMAT, SAMPLE)));

    /** The subcommand: its table and how a parsed command line becomes a {@code DiscoverCommand}. */
    public static final Subcommand SUBCOMMAND = Subcommand.of(TABLE,
            (args, console) -> new DiscoverCommand(args, console.env(), console.out(), console.err()));

    /** Exit code of a scan in which a source failed. */
    static final int SCAN_FAILED = 1;

    private final Map<String, String> env;
    private final PrintWriter out;
    private final PrintWriter err;
    final ScanOptions scan;
    final HostOptions host;
    final ConfigOption configOption;
    final Format format;
    final String sample;
    /** Reads the host's files: the scan's, the census's and the KubeVirt selectors'. */
    private final HostFiles files = HostFiles.load();

    DiscoverCommand(CliArgs args, Map<String, String> env, PrintWriter out, PrintWriter err) {
        this.env = env;
        this.out = out;
        this.err = err;
        scan = new ScanOptions(args);
        host = HostOptions.of(args);
        configOption = new ConfigOption(args);
        format = Format.valueOf(args.text(FORMAT)); // the table's spelling: the parser hands a choice on as written
        sample = Samples.requireKnown(args.text(SAMPLE));
        if (sample != null && args.has(ScanOptions.HOST_ROOT)) {
            throw new UsageError("--sample and --host-root: give one of them");
        }
    }

    @Override
    public Integer call() throws Exception {
        String report;
        Scanner.Result result;
        PciCensus census;
        host.requireNamedFiles();
        List<DeviceSource> sources = scan.resolveSources(env);
        LiveConfig config = configOption.load(env);
        if (sample != null) {
            try (Samples.Materialized tree = Samples.materialize(sample)) {
                // The sample tree is deleted on close: the report reads its selectors before that.
                result = OneScan.of(host, sources, tree.root(), files, Samples.pciIdsFor(host), Optional.empty(),
                        config);
                census = PciCensus.of(tree.root(), files);
                report = report(result, census, tree.root());
            }
        } else {
            if (!Files.isDirectory(scan.hostRoot)) {
                throw new Refusal("--host-root " + scan.hostRoot + " is not a directory");
            }
            result = OneScan.of(host, sources, scan.hostRoot, files, host.loadPciIds(),
                    scan.resolveStateDir(env).map(ScanOptions.StateDir::path), config);
            census = PciCensus.of(scan.hostRoot, files);
            report = report(result, census, scan.hostRoot);
        }
        out.print(report);
        out.flush();
        if (format != Format.table) {
            err.println(summary(result.snapshot(), census));
            result.failures().forEach((source, why) -> err.println("discover: source " + source + " failed: " + why));
            err.flush();
        }
        return result.failures().isEmpty() ? 0 : SCAN_FAILED;
    }

    private static String summary(Snapshot snapshot, PciCensus census) {
        return census.summary(snapshot.deviceCount(), snapshot.skippedCount());
    }

    private String report(Scanner.Result result, PciCensus census, Path root) {
        Snapshot snapshot = result.snapshot();
        return switch (format) {
            case json -> DiscoveryReport.json(snapshot) + "\n";
            case kubevirt -> KubeVirtReport.yaml(snapshot, root, files);
            case table -> DiscoveryReport.table(snapshot, result.failures(), summary(snapshot, census));
        };
    }
}
