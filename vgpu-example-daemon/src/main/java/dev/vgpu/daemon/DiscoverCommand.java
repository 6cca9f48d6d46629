package dev.vgpu.daemon;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Scanner;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code discover}: one scan, printed as a table, the JSON document of docs/ARCHITECTURE.md or the KubeVirt CR
 * fragment ({@link KubeVirtReport}), then exit 0; exit 1 when a source failed, with why in words. The summary
 * ({@link PciCensus}) ends the table; with a document on stdout it goes to stderr.
 */
@Command(name = "discover", mixinStandardHelpOptions = true,
        description = {"Scan once and print what would be advertised and what was skipped, with reasons.",
            "With --format json or kubevirt, stdout carries only that document; logs and the summary go to stderr.",
            "Exit code 1 when a source failed (e.g. no sys/ under --host-root), saying why.",
            "Environment: VGPU_SOURCES, VGPU_STATE_DIR, VGPU_CONFIG (the flags override them)."})
final class DiscoverCommand implements Callable<Integer> {

    /** Output formats. */
    enum Format { table, json, kubevirt }

    @Mixin
    ScanOptions scan;

    @Mixin
    HostOptions host;

    @Mixin
    ConfigOption configOption;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "table, json, or kubevirt: the permittedHostDevices of the KubeVirt CR for what would be"
                    + " advertised (default: ${DEFAULT-VALUE}).")
    Format format;

    @Option(names = "--sample", paramLabel = "NAME",
            description = "Scan a sample host bundled in the jar instead of --host-root (no state directory is read"
                    + " for it): ${COMPLETION-CANDIDATES}.",
            completionCandidates = Samples.Names.class)
    String sample;

    @Spec
    CommandSpec spec;

    @ParentCommand
    VgpuDaemon parent;

    /** Exit code of a scan in which a source failed. */
    static final int SCAN_FAILED = 1;

    @Override
    public Integer call() throws Exception {
        String report;
        Scanner.Result result;
        PciCensus census;
        host.requireNamedFiles(spec);
        host.useSources(scan.resolveSources(spec, parent.env));
        LiveConfig config = configOption.load(spec, parent.env);
        if (sample != null) {
            try (Samples.Materialized tree = Samples.materialize(spec.commandLine(), sample)) {
                // The sample tree is deleted on close: the report reads its selectors before that.
                result = Wiring.scanOnce(host, tree.root(), Samples.pciIdsFor(host), Optional.empty(), config);
                census = PciCensus.of(tree.root());
                report = report(result, census, tree.root());
            }
        } else {
            ServeCommand.requireDirectory(spec, "--host-root", scan.hostRoot);
            result = Wiring.scanOnce(host, scan.hostRoot, host.loadPciIds(),
                    scan.resolveStateDir(spec, parent.env).map(ScanOptions.StateDir::path), config);
            census = PciCensus.of(scan.hostRoot);
            report = report(result, census, scan.hostRoot);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(report);
        out.flush();
        if (format != Format.table) {
            PrintWriter err = spec.commandLine().getErr();
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
            case kubevirt -> KubeVirtReport.yaml(snapshot, root);
            case table -> DiscoveryReport.table(snapshot, result.failures(), summary(snapshot, census));
        };
    }
}
