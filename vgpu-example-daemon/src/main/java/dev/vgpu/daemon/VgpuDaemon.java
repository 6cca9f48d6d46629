package dev.vgpu.daemon;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.CliParser;
import dev.vgpu.daemon.cli.HelpText;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.Subcommand;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.configure.ConfigureCommand;
import dev.vgpu.daemon.demo.DemoCommand;
import dev.vgpu.daemon.demo.KubeletCommand;
import dev.vgpu.daemon.discover.DiscoverCommand;
import dev.vgpu.daemon.logging.DaemonLogging;
import dev.vgpu.daemon.process.DaemonVersion;
import dev.vgpu.daemon.process.Shutdown;
import dev.vgpu.daemon.scan.PciIdsDatabase;
import dev.vgpu.daemon.serve.ServeCommand;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The node agent: {@code serve} (the default), {@code discover}, {@code demo} and {@code kubelet} (a stand-in kubelet
 * to try {@code serve} against).
 *
 * <pre>
 * java -jar vgpu-daemon.jar                       # serve with defaults
 * java -jar vgpu-daemon.jar discover --format json
 * java -jar vgpu-daemon.jar demo
 * java -jar vgpu-daemon.jar kubelet --device-plugin-dir /tmp/dp
 * </pre>
 * Usage errors ({@link UsageError}: an unknown option, a missing or malformed value) exit with code 2 after a
 * two-line usage that points at {@code --help}; so do conditions that stop a command before it starts
 * ({@link Refusal}: a missing {@code --pci-ids} file, a malformed {@code VFIO_VGPU_RESCAN_INTERVAL}), with one message
 * and no usage. The command line is read by {@link CliParser} against each command's option table; the list of
 * {@link Subcommand}s below is the whole dispatch, so a new command is one more entry.
 */
public final class VgpuDaemon {

    /** The subcommands, in the order the top-level help lists them. */
    static final List<Subcommand> SUBCOMMANDS = List.of(ServeCommand.SUBCOMMAND, DiscoverCommand.SUBCOMMAND,
            ConfigureCommand.SUBCOMMAND, DemoCommand.SUBCOMMAND, KubeletCommand.SUBCOMMAND);
    /** Their option tables, in the same order. */
    static final List<CliCommand> COMMANDS = SUBCOMMANDS.stream().map(Subcommand::table).toList();
    private static final String DESCRIPTION = "Kubernetes device plugin for NVIDIA GPUs and vGPUs on KubeVirt.";
    private static final String FOOTER = "Without a subcommand, 'serve' runs. Logs go to stderr; set"
            + " VGPU_LOG_LEVEL=debug for more.";
    /** Exit code of a command line the daemon cannot run, and of a refusal. */
    static final int USAGE = 2;
    /** Exit code of a command that failed unexpectedly (its stack trace is printed). */
    static final int FAILED = 1;
    /** Netty's allocator choice, under gRPC's shaded package name. */
    static final String NETTY_ALLOCATOR = "io.grpc.netty.shaded.io.netty.allocator.type";

    private VgpuDaemon() {
    }

    /** Entry point of the jar. */
    public static void main(String[] args) {
        // Before any Netty class loads: unpooled buffers, unless the JVM was told otherwise. The daemon's gRPC traffic
        // is a few calls a minute, and Netty's default pooling allocator loads JFR event classes, which the JVM
        // instruments at load with the class-file library: start-up work for nothing (BENCHMARKS.md, "Start-up").
        if (System.getProperty(NETTY_ALLOCATOR) == null) {
            System.setProperty(NETTY_ALLOCATOR, "unpooled");
        }
        String level = System.getenv("VGPU_LOG_LEVEL");
        if (!DaemonLogging.configure(level)) {
            System.err.println("VGPU_LOG_LEVEL=" + Printable.of(level)
                    + " names no level (trace, debug, info, warn, error): logging at info");
        }
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        int code = run(args, System.getenv(), System.out, System.err);
        if (code != Subcommand.KEEP_RUNNING) {
            Shutdown.exit(code);
        }
        // serve runs on daemon threads; main waits here until SIGTERM/SIGINT runs the shutdown hook.
        try {
            new java.util.concurrent.CountDownLatch(1).await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs one command line; returns the exit code, or {@link Subcommand#KEEP_RUNNING} when {@code serve} is
     * running and the process must stay up.
     */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        PrintWriter stdout = new PrintWriter(out, true, StandardCharsets.UTF_8);
        PrintWriter stderr = new PrintWriter(err, true, StandardCharsets.UTF_8);
        CliCommand chosen = null;
        try {
            CliParser.Parsed parsed = CliParser.parse(COMMANDS, withDefaultSubcommand(args));
            chosen = parsed.command();
            if (parsed.request() == CliParser.Request.HELP) {
                stdout.print(help(chosen));
                return 0;
            }
            if (parsed.request() == CliParser.Request.VERSION) {
                for (String line : versionLines()) {
                    stdout.println(line);
                }
                return 0;
            }
            return command(parsed.args(), env, stdout, stderr).call();
        } catch (Refusal e) {
            stderr.println(e.getMessage());
            return USAGE;
        } catch (UsageError e) {
            stderr.println(e.getMessage());
            stderr.print(HelpText.shortUsage(e.command() != null ? e.command() : chosen, COMMANDS));
            return USAGE;
        } catch (Exception e) {
            e.printStackTrace(stderr);
            return FAILED;
        } finally {
            stdout.flush();
            stderr.flush();
        }
    }

    /**
     * The command {@code args} are for, its options read and converted (nothing checked against the machine yet).
     *
     * @throws UsageError for a value that does not convert (a number, a path)
     */
    static Callable<Integer> command(CliArgs args, Map<String, String> env, PrintWriter out, PrintWriter err) {
        for (Subcommand subcommand : SUBCOMMANDS) {
            if (subcommand.table() == args.command()) {
                return subcommand.prepare(args, new Subcommand.Console(env, out, err));
            }
        }
        throw new IllegalStateException("no subcommand for " + args.command().name());
    }

    /** The usage help of a command, or the top level's for null. */
    static String help(CliCommand command) {
        return command == null ? HelpText.topLevel(DESCRIPTION, COMMANDS, FOOTER) : HelpText.of(command);
    }

    /** {@code serve} is the default: arguments that start with an option (other than help/version) get it. */
    static String[] withDefaultSubcommand(String[] args) {
        if (args.length == 0 || (args[0].startsWith("-") && !CliCommand.isBuiltIn(args[0]))) {
            List<String> all = new ArrayList<>(List.of("serve"));
            all.addAll(Arrays.asList(args));
            return all.toArray(String[]::new);
        }
        return args;
    }

    /**
     * {@code --version}: the project version from the jar manifest ({@code Implementation-Version}; "development
     * build" when run from classes), the bundled pci.ids version and the Java runtime.
     */
    static List<String> versionLines() {
        return List.of(
                "vgpu-daemon " + DaemonVersion.current(),
                "pci.ids: bundled NVIDIA section version " + PciIdsDatabase.bundledVersion()
                        + " (the upstream plugin's names, plus the ids only the newer database knows; used when"
                        + " --pci-ids is not given and no system pci.ids is found)",
                "Java runtime: " + System.getProperty("java.runtime.version") + " ("
                        + System.getProperty("java.vendor") + ", " + System.getProperty("java.vm.name") + ")");
    }
}
