package dev.vgpu.daemon;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;

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
 * Usage errors exit with code 2 after the usage help; so do conditions that stop a command before it starts
 * (a missing {@code --pci-ids} file, a malformed {@code VFIO_VGPU_RESCAN_INTERVAL}), with one message and no
 * usage help.
 */
@Command(name = "vgpu-daemon", mixinStandardHelpOptions = true, versionProvider = VgpuDaemon.Version.class,
        description = "Kubernetes device plugin for NVIDIA GPUs and vGPUs on KubeVirt.",
        subcommands = {ServeCommand.class, DiscoverCommand.class, DemoCommand.class, KubeletCommand.class},
        footer = {"", "Without a subcommand, 'serve' runs. Logs go to stderr; set VGPU_LOG_LEVEL=debug for more."})
public final class VgpuDaemon implements Runnable {

    private static final Set<String> TOP_LEVEL = Set.of("-h", "--help", "-V", "--version");

    /** The process environment as seen by the commands (injected for tests). */
    final Map<String, String> env;

    VgpuDaemon(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** Entry point of the jar. */
    public static void main(String[] args) {
        String level = System.getenv("VGPU_LOG_LEVEL");
        if (level != null && !level.isBlank()) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", level.strip().toLowerCase(java.util.Locale.ROOT));
        }
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        int code = run(args, System.getenv(), System.out, System.err);
        if (code != ServeCommand.KEEP_RUNNING) {
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
     * Runs one command line; returns the exit code, or {@link ServeCommand#KEEP_RUNNING} when {@code serve} is
     * running and the process must stay up.
     */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        CommandLine cli = new CommandLine(new VgpuDaemon(env));
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setUsageHelpWidth(HelpText.WIDTH);
        HelpText.install(cli);
        CommandLine.IParameterExceptionHandler usageErrors = cli.getParameterExceptionHandler();
        cli.setParameterExceptionHandler((e, given) -> {
            if (e instanceof Refusal) {
                e.getCommandLine().getErr().println(e.getMessage());
                return 2;
            }
            if (e instanceof CommandLine.UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty()) {
                // Picocli prints either its suggestions ("--colour": "--config") or the usage help; a usage error
                // gets the usage help always, so both.
                CommandLine command = e.getCommandLine();
                command.getErr().println(e.getMessage());
                CommandLine.UnmatchedArgumentException.printSuggestions(e, command.getErr());
                command.usage(command.getErr());
                return command.getCommandSpec().exitCodeOnInvalidInput();
            }
            return usageErrors.handleParseException(e, given);
        });
        return cli.execute(withDefaultSubcommand(args));
    }

    /** {@code serve} is the default: arguments that start with an option (other than help/version) get it. */
    static String[] withDefaultSubcommand(String[] args) {
        if (args.length == 0 || (args[0].startsWith("-") && !TOP_LEVEL.contains(args[0]))) {
            List<String> all = new ArrayList<>(List.of("serve"));
            all.addAll(Arrays.asList(args));
            return all.toArray(String[]::new);
        }
        return args;
    }

    @Override
    public void run() {
        throw new IllegalStateException("unreachable: serve is the default subcommand");
    }

    /** The project version from the jar manifest, or "(development build)" when run from classes. */
    static String version() {
        String v = VgpuDaemon.class.getPackage().getImplementationVersion();
        return v == null ? "(development build)" : v;
    }

    /**
     * {@code --version}: the project version from the jar manifest ({@code Implementation-Version}; "development
     * build" when run from classes), the bundled pci.ids version and the Java runtime.
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {
                "vgpu-daemon " + version(),
                "pci.ids: bundled NVIDIA section version " + PciIdsDatabase.bundledVersion()
                        + " (the upstream plugin's names, plus the ids only the newer database knows; used when"
                        + " --pci-ids is not given and no system pci.ids is found)",
                "Java runtime: " + System.getProperty("java.runtime.version") + " ("
                        + System.getProperty("java.vendor") + ", " + System.getProperty("java.vm.name") + ")",
            };
        }
    }
}
