package dev.vgpu.daemon;

import dev.vgpu.core.Durations;
import dev.vgpu.core.RescanInterval;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code serve}: discover, serve one device plugin per resource, rescan when asked, stop on SIGTERM/SIGINT. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run the device plugin (the default command).",
            "Environment: VFIO_VGPU_RESCAN_INTERVAL (Go duration, e.g. 30s or 5m; unset, empty or 0 = no rescans; "
                    + "positive values below 5s are raised to 5s), overridden by --rescan-interval; VGPU_SOURCES, "
                    + "overridden by --sources; VGPU_STATE_DIR, overridden by --state-dir; VGPU_CONFIG, overridden by "
                    + "--config."})
final class ServeCommand implements Callable<Integer> {

    /** Returned when the daemon runs on in its own threads; the process must not exit. */
    static final int KEEP_RUNNING = Integer.MIN_VALUE;
    /** The environment variable that enables periodic rediscovery. */
    static final String RESCAN_ENV = "VFIO_VGPU_RESCAN_INTERVAL";
    /** The environment variable naming the metrics address. */
    static final String METRICS_ENV = "VGPU_METRICS_ADDRESS";
    /**
     * Where {@code --metrics-address} listens unless told otherwise (metrics, {@code /healthz}, {@code /readyz});
     * the manifests in {@code deploy/} pass it explicitly and probe its port. Documented in the README.
     */
    static final String DEFAULT_METRICS_ADDRESS = "0.0.0.0:9410";

    @Mixin
    ScanOptions scan;

    @Mixin
    HostOptions host;

    @Mixin
    ConfigOption configOption;

    @Mixin
    DraOptions dra;

    @Option(names = "--device-plugin-dir", paramLabel = "DIR", defaultValue = "/var/lib/kubelet/device-plugins",
            description = "Where kubelet.sock lives and plugin sockets are created (default: ${DEFAULT-VALUE}).")
    Path devicePluginDir;

    @Option(names = "--rescan-interval", paramLabel = "DURATION",
            description = "Rescan period, Go duration syntax; overrides " + RESCAN_ENV + ".")
    String rescanInterval;

    @Option(names = "--metrics-address", paramLabel = "HOST:PORT",
            description = "Serve /metrics, /healthz and /readyz over HTTP here; overrides " + METRICS_ENV
                    + " (default: " + DEFAULT_METRICS_ADDRESS + ", all interfaces; empty = off).")
    String metricsAddress;

    @Option(names = "--scan-deadline", paramLabel = "DURATION", defaultValue = "1m",
            description = "A discovery round running longer than this fails /healthz (default: ${DEFAULT-VALUE}).")
    String scanDeadline;

    @Option(names = "--sample", paramLabel = "NAME",
            description = "Serve a sample host bundled in the jar instead of --host-root, written to a temporary"
                    + " directory that is deleted at exit, to try serve, its metrics, probes and SIGHUP without a GPU:"
                    + " ${COMPLETION-CANDIDATES}.",
            completionCandidates = Samples.Names.class)
    String sample;

    @Option(names = "--unhealthy-after-failed-scans", paramLabel = "N",
            defaultValue = "" + FailedScans.DEFAULT_LIMIT,
            description = "This many discovery rounds in a row in which a source failed fail /healthz, so the kubelet"
                    + " restarts the pod; 0 = never (default: ${DEFAULT-VALUE}).")
    int failedScansLimit;

    @ParentCommand
    VgpuDaemon parent;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (dra.mode(spec, parent.env) == DraOptions.Mode.DRA) {
            return DraServe.call(this);
        }
        dra.refuseInDevicePluginMode(spec);
        RescanInterval interval = rescanInterval(spec, rescanInterval, parent.env.get(RESCAN_ENV));
        host.requireNamedFiles(spec);
        if (sample != null && spec.commandLine().getParseResult().hasMatchedOption("--host-root")) {
            throw new ParameterException(spec.commandLine(), "--sample and --host-root: give one of them");
        }
        if (sample == null) {
            requireDirectory(spec, "--host-root", scan.hostRoot);
        }
        if (!Files.isDirectory(devicePluginDir)) {
            throw new Refusal(spec.commandLine(), "--device-plugin-dir " + devicePluginDir
                    + " is not a directory (is the kubelet's device-plugins directory mounted?)");
        }
        host.useSources(scan.resolveSources(spec, parent.env));
        Optional<Path> stateDir = scan.resolveStateDir(spec, parent.env).map(this::prepareStateDirectory);
        Optional<InetSocketAddress> metrics = metricsAddress(spec, metricsAddress, parent.env.get(METRICS_ENV));
        Duration deadline = scanDeadline(spec, scanDeadline);
        if (failedScansLimit < 0) {
            throw new ParameterException(spec.commandLine(), "invalid --unhealthy-after-failed-scans value "
                    + failedScansLimit + ": a count of rounds, 0 or more (0 = never)");
        }
        LiveConfig config = configOption.load(spec, parent.env);
        DirectoryLock lock = lockDirectory(stateDir.orElse(devicePluginDir));
        Samples.Materialized tree = null;
        try {
            tree = sample == null ? null : Samples.materialize(spec.commandLine(), sample);
            Samples.Materialized written = tree;
            Path hostRoot = tree == null ? scan.hostRoot : tree.root();
            // The stop hook is in place before the first scan: a SIGTERM during start cleans up too.
            Daemon.start(new Daemon.Config(hostRoot, devicePluginDir, tree == null ? host.loadPciIds()
                    : Samples.pciIdsFor(host), interval, host, metrics, deadline, stateDir, config, failedScansLimit),
                    daemon -> Shutdown.onStop(() -> {
                        daemon.close();
                        lock.close();
                        if (written != null) {
                            written.close();
                        }
                    }));
        } catch (java.io.IOException e) {
            lock.close();
            throw new Refusal(spec.commandLine(), "--sample " + sample + ": cannot write the sample host: "
                    + e.getMessage());
        } catch (java.io.UncheckedIOException e) {
            lock.close();
            if (tree != null) {
                tree.close();
            }
            throw new Refusal(spec.commandLine(), e.getMessage() + " (choose another --metrics-address,"
                    + " or an empty one to turn metrics off)");
        } catch (RuntimeException | Error e) {
            lock.close();
            if (tree != null) {
                tree.close();
            }
            throw e;
        }
        return KEEP_RUNNING;
    }

    /**
     * Checks that the state directory lies outside the device-plugin directory (the kubelet empties that one when it
     * restarts) and creates it, owner-only, when it is missing.
     *
     * @throws Refusal naming both directories, or why the state directory cannot be used
     */
    Path prepareStateDirectory(ScanOptions.StateDir given) {
        return prepareStateDirectory(given, devicePluginDir, "--device-plugin-dir", "which the kubelet empties when it"
                + " restarts");
    }

    /**
     * Checks that the state directory lies outside {@code keepOutOf} (the directory of {@code flag}, for the reason
     * {@code why}) and creates it, owner-only, when it is missing.
     *
     * @throws Refusal naming both directories, or why the state directory cannot be used
     */
    Path prepareStateDirectory(ScanOptions.StateDir given, Path keepOutOf, String flag, String why) {
        Path dir = given.path();
        Path state = comparable(dir);
        Path outside = comparable(keepOutOf);
        if (state.startsWith(outside)) {
            throw new Refusal(spec.commandLine(), given.origin() + " " + dir + (state.equals(outside) ? " is"
                    : " is inside") + " the " + flag + " " + keepOutOf + ", " + why + ": choose a directory outside"
                    + " it, such as /var/lib/vgpu");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new Refusal(spec.commandLine(), given.origin() + " " + dir + " is not a directory");
        }
        try {
            if (!Files.isDirectory(dir)) {
                boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
                Files.createDirectories(dir, posix ? new java.nio.file.attribute.FileAttribute<?>[] {
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"))}
                        : new java.nio.file.attribute.FileAttribute<?>[0]);
            }
        } catch (java.io.IOException e) {
            throw new Refusal(spec.commandLine(), "cannot create " + given.origin() + " " + dir + ": " + e);
        }
        return dir;
    }

    /** The path with its existing part's links resolved, so that two spellings of one directory compare equal. */
    static Path comparable(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        Path existing = absolute;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return absolute;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(absolute));
        } catch (java.io.IOException e) {
            return absolute;
        }
    }

    /**
     * One daemon per node; a second one is refused (exit 2) before it touches any socket. The lock is in the state
     * directory when there is one (the kubelet never empties it), else in the device-plugin directory.
     */
    private DirectoryLock lockDirectory(Path dir) {
        try {
            return DirectoryLock.tryAcquire(dir).orElseThrow(() -> new Refusal(spec.commandLine(),
                    "another vgpu daemon is already serving " + devicePluginDir + " (it holds "
                            + dir.resolve(DirectoryLock.FILE) + "); two daemons on one device-plugin directory"
                            + " would replace each other's sockets: stop the other one first"));
        } catch (java.io.IOException e) {
            throw new Refusal(spec.commandLine(), "cannot lock " + dir.resolve(DirectoryLock.FILE) + ": "
                    + e.getMessage());
        }
    }

    /**
     * The effective interval: the flag wins over the environment; errors name the flag or variable (a malformed
     * flag is a usage error, a malformed variable a refusal without usage help).
     */
    static RescanInterval rescanInterval(CommandSpec spec, String flag, String env) {
        String source = flag != null ? "--rescan-interval" : RESCAN_ENV;
        String value = flag != null ? flag : env;
        try {
            return RescanInterval.parse(value);
        } catch (IllegalArgumentException e) {
            String message = "invalid " + source + " value \"" + value + "\": " + e.getMessage()
                    + " (use a Go duration such as 30s, 5m or 1h; 0 or empty disables rescans)";
            throw flag != null ? new ParameterException(spec.commandLine(), message)
                    : new Refusal(spec.commandLine(), message);
        }
    }

    /**
     * The metrics listener: the flag wins over the environment, which wins over {@value #DEFAULT_METRICS_ADDRESS};
     * an empty value turns it off. {@code HOST:PORT}, {@code :PORT} (every interface) or {@code [V6]:PORT}.
     */
    static Optional<InetSocketAddress> metricsAddress(CommandSpec spec, String flag, String env) {
        String source = flag != null ? "--metrics-address" : env != null ? METRICS_ENV : null;
        String value = (flag != null ? flag : env != null ? env : DEFAULT_METRICS_ADDRESS).strip();
        if (value.isEmpty()) {
            return Optional.empty();
        }
        int colon = value.lastIndexOf(':');
        String hostPart = colon < 0 ? "" : value.substring(0, colon);
        String portPart = colon < 0 ? "" : value.substring(colon + 1);
        if (hostPart.startsWith("[") && hostPart.endsWith("]")) {
            hostPart = hostPart.substring(1, hostPart.length() - 1);
        }
        int port = -1;
        if (!portPart.isEmpty() && portPart.length() <= 5 && portPart.chars().allMatch(c -> c >= '0' && c <= '9')) {
            port = Integer.parseInt(portPart);
        }
        if (colon < 0 || port < 0 || port > 65535 || hostPart.contains(":") && !value.contains("[")) {
            String message = "invalid " + (source == null ? "metrics address" : source) + " value \"" + value
                    + "\": use HOST:PORT, :PORT or [IPv6]:PORT, or an empty value to turn metrics off";
            throw flag != null ? new ParameterException(spec.commandLine(), message)
                    : new Refusal(spec.commandLine(), message);
        }
        return Optional.of(hostPart.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(hostPart, port));
    }

    /** The liveness deadline of a discovery round, Go duration syntax, positive. */
    static Duration scanDeadline(CommandSpec spec, String value) {
        try {
            Duration d = Durations.parseGo(value);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("it must be positive");
            }
            return d;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "invalid --scan-deadline value \"" + value + "\": "
                    + e.getMessage());
        }
    }

    static void requireDirectory(CommandSpec spec, String option, Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new Refusal(spec.commandLine(), option + " " + dir + " is not a directory");
        }
    }
}
