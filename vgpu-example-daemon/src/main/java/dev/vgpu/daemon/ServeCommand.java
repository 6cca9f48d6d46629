package dev.vgpu.daemon;

import dev.vgpu.core.Durations;
import dev.vgpu.core.RescanInterval;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code serve}: discover, serve one device plugin per resource, rescan when asked, stop on SIGTERM/SIGINT. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run the device plugin (the default command).",
            "Environment: VFIO_VGPU_RESCAN_INTERVAL (Go duration, e.g. 30s or 5m; unset, empty or 0 = no rescans; "
                    + "positive values below 5s are raised to 5s), overridden by --rescan-interval; VGPU_SOURCES, "
                    + "overridden by --sources."})
final class ServeCommand implements Callable<Integer> {

    /** Returned when the daemon runs on in its own threads; the process must not exit. */
    static final int KEEP_RUNNING = Integer.MIN_VALUE;
    /** The environment variable that enables periodic rediscovery. */
    static final String RESCAN_ENV = "VFIO_VGPU_RESCAN_INTERVAL";
    /**
     * Where {@code --metrics-address} listens unless told otherwise (metrics, {@code /healthz}, {@code /readyz});
     * the manifests in {@code deploy/} pass it explicitly and probe its port. Documented in the README.
     */
    static final String DEFAULT_METRICS_ADDRESS = "0.0.0.0:9410";

    @Mixin
    ScanOptions scan;

    @Mixin
    HostOptions host;

    @Option(names = "--device-plugin-dir", paramLabel = "DIR", defaultValue = "/var/lib/kubelet/device-plugins",
            description = "Where kubelet.sock lives and plugin sockets are created (default: ${DEFAULT-VALUE}).")
    Path devicePluginDir;

    @Option(names = "--rescan-interval", paramLabel = "DURATION",
            description = "Rescan period, Go duration syntax; overrides " + RESCAN_ENV + ".")
    String rescanInterval;

    @ParentCommand
    VgpuDaemon parent;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        RescanInterval interval = rescanInterval(spec, rescanInterval, parent.env.get(RESCAN_ENV));
        host.requireNamedFiles(spec);
        requireDirectory(spec, "--host-root", scan.hostRoot);
        if (!Files.isDirectory(devicePluginDir)) {
            throw new Refusal(spec.commandLine(), "--device-plugin-dir " + devicePluginDir
                    + " is not a directory (is the kubelet's device-plugins directory mounted?)");
        }
        host.useSources(scan.resolveSources(spec, parent.env));
        Daemon daemon = Daemon.start(new Daemon.Config(scan.hostRoot, devicePluginDir, host.loadPciIds(), interval,
                host));
        Shutdown.onStop(daemon::close);
        return KEEP_RUNNING;
    }

    /**
     * The effective interval: the flag wins over the environment; errors name the flag or variable (a malformed
     * flag is a usage error, a malformed variable a refusal without usage help).
     */
    static RescanInterval rescanInterval(CommandSpec spec, String flag, String env) {
        String source = flag != null ? "--rescan-interval" : RESCAN_ENV;
        String value = flag != null ? flag : env;
        try {
            return Durations.rescanInterval(value);
        } catch (IllegalArgumentException e) {
            String message = "invalid " + source + " value \"" + value + "\": " + e.getMessage()
                    + " (use a Go duration such as 30s, 5m or 1h; 0 or empty disables rescans)";
            throw flag != null ? new ParameterException(spec.commandLine(), message)
                    : new Refusal(spec.commandLine(), message);
        }
    }

    static void requireDirectory(CommandSpec spec, String option, Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new Refusal(spec.commandLine(), option + " " + dir + " is not a directory");
        }
    }
}
