package dev.vgpu.daemon;

import dev.vgpu.core.Snapshot;
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
 * fragment ({@link KubeVirtReport}), then exit 0.
 */
@Command(name = "discover", mixinStandardHelpOptions = true,
        description = {"Scan once and print what would be advertised and what was skipped, with reasons.",
            "With --format json or kubevirt, stdout carries only that document; logs go to stderr.",
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

    @Override
    public Integer call() throws Exception {
        String report;
        host.requireNamedFiles(spec);
        host.useSources(scan.resolveSources(spec, parent.env));
        LiveConfig config = configOption.load(spec, parent.env);
        if (sample != null) {
            try (Samples.Materialized tree = Samples.materialize(spec.commandLine(), sample)) {
                // The sample tree is deleted on close: the report reads its selectors before that.
                report = report(Wiring.scanOnce(host, tree.root(), Samples.pciIdsFor(host), Optional.empty(), config),
                        tree.root());
            }
        } else {
            ServeCommand.requireDirectory(spec, "--host-root", scan.hostRoot);
            report = report(Wiring.scanOnce(host, scan.hostRoot, host.loadPciIds(),
                    scan.resolveStateDir(spec, parent.env).map(ScanOptions.StateDir::path), config), scan.hostRoot);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(report);
        out.flush();
        return 0;
    }

    private String report(Snapshot snapshot, Path root) {
        return switch (format) {
            case json -> DiscoveryReport.json(snapshot) + "\n";
            case kubevirt -> KubeVirtReport.yaml(snapshot, root);
            case table -> DiscoveryReport.table(snapshot);
        };
    }
}
