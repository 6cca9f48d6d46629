package dev.vgpu.daemon;

import dev.vgpu.core.Snapshot;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code discover}: one scan, printed as a table or the JSON document of docs/ARCHITECTURE.md, then exit 0. */
@Command(name = "discover", mixinStandardHelpOptions = true,
        description = {"Scan once and print what would be advertised and what was skipped, with reasons.",
            "With --format json, stdout carries only the JSON document; logs go to stderr."})
final class DiscoverCommand implements Callable<Integer> {

    /** Output formats. */
    enum Format { table, json }

    @Mixin
    ScanOptions scan;

    @Mixin
    HostOptions host;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "table or json (default: ${DEFAULT-VALUE}).")
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

    @Override
    public Integer call() throws Exception {
        Snapshot snapshot;
        host.requireNamedFiles(spec);
        host.useSources(scan.resolveSources(spec, parent.env));
        if (sample != null) {
            try (Samples.Materialized tree = Samples.materialize(spec.commandLine(), sample)) {
                snapshot = Wiring.scanOnce(host, tree.root(), Samples.pciIdsFor(host));
            }
        } else {
            ServeCommand.requireDirectory(spec, "--host-root", scan.hostRoot);
            snapshot = Wiring.scanOnce(host, scan.hostRoot, host.loadPciIds(),
                    scan.resolveStateDir(spec, parent.env).map(ScanOptions.StateDir::path));
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(format == Format.json ? DiscoveryReport.json(snapshot) + "\n" : DiscoveryReport.table(snapshot));
        out.flush();
        return 0;
    }
}
