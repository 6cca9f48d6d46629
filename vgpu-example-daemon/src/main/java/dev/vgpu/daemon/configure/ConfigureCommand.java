package dev.vgpu.daemon.configure;

import dev.vgpu.configurator.ApplyReport;
import dev.vgpu.configurator.CardOutcome;
import dev.vgpu.configurator.InUse;
import dev.vgpu.configurator.KnownTypeNames;
import dev.vgpu.configurator.file.InvalidVgpuConfigException;
import dev.vgpu.configurator.file.VgpuLayout;
import dev.vgpu.configurator.sysfs.SysfsVgpuHost;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.Subcommand;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.ScanOptions;
import dev.vgpu.nvml.RecoveringNvml;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code configure}: make the host's vendor-VFIO cards hold a layout of a vgpu-device-manager file, once, and exit
 * (docs/CONFIGURATOR.md). The plan or each card's outcome in words on stdout, logs on stderr. Exit 0: the host holds
 * the layout (after applying, or already); 1: a card was refused or failed (each named with why; a refused card is
 * left as it was, a failed one rolled back), or with {@code --assert} the host differs; 2: a usage or file error,
 * including a profile a card does not have and a card two entries name.
 */
public final class ConfigureCommand implements Callable<Integer> {

    /** The kubelet's device-plugin directory, as {@code serve}'s: its checkpoint names the VFs allocated. */
    static final CliOption DEVICE_PLUGIN_DIR = CliOption.value("--device-plugin-dir", "DIR", "The kubelet's"
            + " device-plugin directory: a VF its kubelet_internal_checkpoint names is in use, never written"
            + " (default: ${DEFAULT}).").withDefault("/var/lib/kubelet/device-plugins");
    static final CliOption STATE_DIR = CliOption.value("--state-dir", "DIR", "The daemon's state directory: a VF a"
            + " prepared DRA claim holds (its checkpoint there) is in use; the profile names learned there name full"
            + " cards, and the names this run read are kept there. Overrides " + ScanOptions.STATE_ENV + ".")
            .withEnv(ScanOptions.STATE_ENV);
    static final CliOption DRY_RUN = CliOption.flag("--dry-run", "Print the plan in words and write nothing (exit 0"
            + " when every card could be planned).");
    static final CliOption ASSERT = CliOption.flag("--assert", "Write nothing; exit 0 when the host holds the layout,"
            + " 1 when it differs.");
    /** {@code configure}'s table. */
    public static final CliCommand TABLE = new CliCommand("configure", List.of(
            "Make the vendor-VFIO cards hold a vGPU layout of a vgpu-device-manager file, then exit.",
            "Cards are counted as GPU 0, 1, ... in PCI address order. VFs already holding a wanted profile are kept;"
                    + " a VF in use (kubelet or DRA checkpoint) is never written, and a card that would need one is"
                    + " refused; a failed write rolls its card back.",
            "Exit code 0: the host holds the layout; 1: a card was refused or failed, or (--assert) the host differs;"
                    + " 2: a usage or file error, or a profile a card does not have.",
            "Environment: " + LayoutOptions.FILE_ENV + ", " + LayoutOptions.SELECT_ENV + ", " + ScanOptions.STATE_ENV
                    + " (the flags override them)."),
            CliCommand.join(LayoutOptions.OPTIONS, List.of(ScanOptions.HOST_ROOT, DEVICE_PLUGIN_DIR, STATE_DIR,
                    DRY_RUN, ASSERT), HostOptions.OPTIONS));

    /** The subcommand: its table and how a parsed command line becomes a {@code ConfigureCommand}. */
    public static final Subcommand SUBCOMMAND = Subcommand.of(TABLE,
            (args, console) -> new ConfigureCommand(args, console.env(), console.out(), console.err()));

    /** Exit code of a card refused or failed, or of a host that differs ({@code --assert}). */
    static final int DIFFERS = 1;
    /** Exit code of a usage or file error. */
    static final int USAGE = 2;

    private final CliArgs args;
    private final Map<String, String> env;
    private final PrintWriter out;
    private final PrintWriter err;
    private final HostOptions host;
    private final Path hostRoot;
    private final Path devicePluginDir;
    private final boolean dryRun;
    private final boolean check;

    ConfigureCommand(CliArgs args, Map<String, String> env, PrintWriter out, PrintWriter err) {
        this.args = args;
        this.env = env;
        this.out = out;
        this.err = err;
        host = HostOptions.of(args);
        hostRoot = args.path(ScanOptions.HOST_ROOT);
        devicePluginDir = args.path(DEVICE_PLUGIN_DIR);
        dryRun = args.flag(DRY_RUN);
        check = args.flag(ASSERT);
        if (dryRun && check) {
            throw new UsageError(TABLE, "--dry-run and --assert: give one of them");
        }
        if (args.flag(LayoutOptions.SIMULATED_HOST) && !args.has(ScanOptions.HOST_ROOT)) {
            throw new UsageError(TABLE, "--simulated-host needs --host-root: the simulator's tree is never /");
        }
    }

    @Override
    public Integer call() {
        LayoutOptions.Selected selected = LayoutOptions.resolve(args, env).orElseThrow(() -> new Refusal(
                "configure needs a layout: --vgpu-config FILE --select NAME (or " + LayoutOptions.FILE_ENV + " and "
                        + LayoutOptions.SELECT_ENV + ")"));
        host.requireNamedFiles();
        VgpuLayout layout = LayoutOptions.loadOrRefuse(selected);
        LayoutHost target = LayoutHost.of(hostRoot, args.flag(LayoutOptions.SIMULATED_HOST));
        Optional<Path> stateDir = stateDir();
        InUseSources sources = new InUseSources(devicePluginDir, stateDir);
        InUse inUse = sources.inUse();
        try (RecoveringNvml nvml = host.openNvmlBesideTheFirstScan()) {
            nvml.awaitFirstAttempt();
            VgpuTypeResolver names = KnownTypeNames.union(nvml.vgpuTypeResolver(),
                    LayoutRun.learnedNames(hostRoot, stateDir));
            SysfsVgpuHost reader = target.reader(names);
            out.println("configure: " + selected.describe() + " on " + target.describe() + (dryRun
                    ? " (dry run: nothing is written)" : check ? " (assert: nothing is written)" : "")
                    + "; VFs in use from " + sources.describe());
            LayoutRun.Selection selection;
            try {
                selection = LayoutRun.select(layout, reader, inUse);
            } catch (InvalidVgpuConfigException e) {
                throw new Refusal(selected.problem(e));
            } catch (IOException e) {
                err.println("configure: " + e.getMessage());
                return DIFFERS;
            }
            selection.demands().unmatched().forEach(line -> out.println("note: " + line));
            if (selection.demands().cards().isEmpty()) {
                out.println("no card of this host is named by the layout: nothing to do");
                return 0;
            }
            return dryRun || check ? plan(selection) : apply(selection, reader, target, inUse, stateDir, names);
        }
    }

    private int plan(LayoutRun.Selection selection) {
        LayoutRun.Plan plan = LayoutRun.plan(selection);
        plan.lines().forEach(out::println);
        if (plan.fileMistake()) {
            return USAGE;
        }
        if (check) {
            out.println(plan.matches() ? "the host holds the layout" : "the host differs from the layout");
            return plan.matches() ? 0 : DIFFERS;
        }
        return plan.refused() ? DIFFERS : 0;
    }

    private int apply(LayoutRun.Selection selection, SysfsVgpuHost reader, LayoutHost target, InUse inUse,
                      Optional<Path> stateDir, VgpuTypeResolver names) {
        ApplyReport report = LayoutRun.apply(selection, reader, target, inUse);
        for (CardOutcome outcome : report.cards()) {
            out.println(LayoutRun.describe(selection.demands(), outcome));
        }
        out.println(report.hostMatches() ? "the host holds the layout (" + report.writes() + " writes)"
                : "the host does not hold the layout: " + report.results());
        if (stateDir.isPresent() && report.writes() > 0) {
            LayoutRun.recordNames(hostRoot, stateDir.get(), KnownTypeNames.union(report.typeNames(), names))
                    .ifPresent(why -> err.println("configure: the profile names read were not kept in "
                            + stateDir.get() + ": " + why));
        }
        if (report.hostMatches()) {
            return 0;
        }
        return report.cards().stream().anyMatch(LayoutRun::fileMistake) ? USAGE : DIFFERS;
    }

    private Optional<Path> stateDir() {
        CliArgs.Given given = args.given(STATE_DIR, env);
        if (given == null || given.value().isBlank()) {
            return Optional.empty();
        }
        try {
            return Optional.of(Path.of(given.value().strip()));
        } catch (java.nio.file.InvalidPathException e) {
            throw new Refusal("invalid " + given.origin() + " value: " + e.getMessage());
        }
    }
}
