package dev.vgpu.daemon;

import dev.vgpu.core.Durations;
import dev.vgpu.core.RescanInterval;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code serve}: discover, serve one device plugin per resource, rescan when asked, stop on SIGTERM/SIGINT. */
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

    static final CliOption DEVICE_PLUGIN_DIR = CliOption.value("--device-plugin-dir", "DIR", "Where kubelet.sock lives"
            + " and plugin sockets are created (default: ${DEFAULT}).").withDefault("/var/lib/kubelet/device-plugins");
    static final CliOption RESCAN_INTERVAL = CliOption.value("--rescan-interval", "DURATION", "Rescan period, Go"
            + " duration syntax; overrides " + RESCAN_ENV + ".").withEnv(RESCAN_ENV);
    static final CliOption METRICS_ADDRESS = CliOption.value("--metrics-address", "HOST:PORT", "Serve /metrics,"
            + " /healthz and /readyz over HTTP here; overrides " + METRICS_ENV + " (default: " + DEFAULT_METRICS_ADDRESS
            + ", all interfaces; empty = off).").withEnv(METRICS_ENV);
    static final CliOption SCAN_DEADLINE = CliOption.value("--scan-deadline", "DURATION", "A discovery round running"
            + " longer than this fails /healthz (default: ${DEFAULT}).").withDefault("1m");
    static final CliOption SAMPLE = CliOption.value("--sample", "NAME", "Serve a sample host bundled in the jar instead"
            + " of --host-root, written to a temporary directory that is deleted at exit, to try serve, its metrics,"
            + " probes and SIGHUP without a GPU: " + Samples.NAMES + ".");
    static final CliOption FAILED_SCANS = CliOption.value("--unhealthy-after-failed-scans", "N", "This many discovery"
            + " rounds in a row in which a source failed fail /healthz, so the kubelet restarts the pod; 0 = never"
            + " (default: ${DEFAULT}).").withDefault(Integer.toString(FailedScans.DEFAULT_LIMIT));
    /** {@code serve}'s table. */
    static final CliCommand COMMAND = new CliCommand("serve", List.of("Run the device plugin (the default command).",
            "Environment: VFIO_VGPU_RESCAN_INTERVAL (Go duration, e.g. 30s or 5m; unset, empty or 0 = no rescans;"
                    + " positive values below 5s are raised to 5s), overridden by --rescan-interval; VGPU_SOURCES,"
                    + " overridden by --sources; VGPU_STATE_DIR, overridden by --state-dir; VGPU_CONFIG, overridden by"
                    + " --config; VGPU_CONFIG_YAML (a configuration's text), used when neither names a file.",
            "SIGHUP rescans at once and reads the --config file again."),
            CliCommand.join(ScanOptions.OPTIONS, HostOptions.OPTIONS, ConfigOption.OPTIONS, DraOptions.OPTIONS,
                    List.of(DEVICE_PLUGIN_DIR, RESCAN_INTERVAL, METRICS_ADDRESS, SCAN_DEADLINE, SAMPLE, FAILED_SCANS)));

    final CliArgs args;
    /** The process environment as seen by the command (injected for tests). */
    final Map<String, String> env;
    final ScanOptions scan;
    final HostOptions host;
    final ConfigOption configOption;
    final DraOptions dra;
    final Path devicePluginDir;
    final String rescanInterval;
    final String metricsAddress;
    final String scanDeadline;
    final String sample;
    final int failedScansLimit;

    ServeCommand(CliArgs args, Map<String, String> env) {
        this.args = args;
        this.env = env;
        scan = new ScanOptions(args);
        host = new HostOptions(args);
        configOption = new ConfigOption(args);
        dra = new DraOptions(args);
        devicePluginDir = args.path(DEVICE_PLUGIN_DIR);
        rescanInterval = args.text(RESCAN_INTERVAL);
        metricsAddress = args.text(METRICS_ADDRESS);
        scanDeadline = args.text(SCAN_DEADLINE);
        sample = Samples.requireKnown(args.text(SAMPLE));
        failedScansLimit = args.integer(FAILED_SCANS);
        // What the command line alone decides, for both modes.
        if (sample != null && args.has(ScanOptions.HOST_ROOT)) {
            throw new UsageError("--sample and --host-root: give one of them");
        }
        if (failedScansLimit < 0) {
            throw new UsageError("invalid --unhealthy-after-failed-scans value " + failedScansLimit
                    + ": a count of rounds, 0 or more (0 = never)");
        }
    }

    @Override
    public Integer call() {
        if (dra.mode(env) == DraOptions.Mode.DRA) {
            return DraServe.call(this);
        }
        dra.refuseInDevicePluginMode();
        RescanInterval interval = rescanInterval(rescanInterval, env.get(RESCAN_ENV));
        host.requireNamedFiles();
        if (sample == null) {
            requireDirectory("--host-root", scan.hostRoot);
        }
        if (!Files.isDirectory(devicePluginDir)) {
            throw new Refusal("--device-plugin-dir " + devicePluginDir
                    + " is not a directory (is the kubelet's device-plugins directory mounted?)");
        }
        host.useSources(scan.resolveSources(env));
        Optional<Path> stateDir = scan.resolveStateDir(env).map(this::prepareStateDirectory);
        Optional<InetSocketAddress> metrics = metricsAddress(metricsAddress, env.get(METRICS_ENV));
        Duration deadline = scanDeadline(scanDeadline);
        LiveConfig config = configOption.load(env);
        DirectoryLock lock = lock(stateDir.orElse(devicePluginDir), "is already serving " + devicePluginDir,
                "two daemons on one device-plugin directory would replace each other's sockets");
        startOnHost(lock, (hostRoot, names, onStop) -> Daemon.start(new Daemon.Config(hostRoot, devicePluginDir,
                names, interval, host, metrics, deadline, stateDir, config, failedScansLimit),
                daemon -> onStop.accept(daemon::close)));
        return KEEP_RUNNING;
    }

    /** A mode's start on a host root: the daemon it starts hands {@code onStop} what closes it. */
    interface HostStart {
        void start(Path hostRoot, dev.vgpu.core.PciIds names, java.util.function.Consumer<Runnable> onStop);
    }

    /**
     * Starts a mode on the host it serves (the sample host, written now, or {@code --host-root}) with its pci.ids
     * names, holding {@code lock}. The stop hook is in place before the first scan, so a SIGTERM during start cleans
     * up too: it closes the daemon, the lock and the sample host. A start that fails closes the lock and the sample
     * host; a {@link CannotStart} becomes a {@link Refusal} with its message.
     */
    void startOnHost(DirectoryLock lock, HostStart start) {
        Samples.Materialized tree = null;
        try {
            tree = sample == null ? null : Samples.materialize(sample);
            Samples.Materialized written = tree;
            start.start(tree == null ? scan.hostRoot : tree.root(), tree == null ? host.loadPciIds()
                    : Samples.pciIdsFor(host), close -> Shutdown.onStop(() -> {
                        close.run();
                        lock.close();
                        if (written != null) {
                            written.close();
                        }
                    }));
        } catch (java.io.IOException e) {
            lock.close();
            throw new Refusal("--sample " + sample + ": cannot write the sample host: " + e.getMessage());
        } catch (CannotStart e) {
            closeAfterFailedStart(lock, tree);
            throw new Refusal(e.getMessage());
        } catch (RuntimeException | Error e) {
            closeAfterFailedStart(lock, tree);
            throw e;
        }
    }

    private static void closeAfterFailedStart(DirectoryLock lock, Samples.Materialized tree) {
        lock.close();
        if (tree != null) {
            tree.close();
        }
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
            throw new Refusal(given.origin() + " " + dir + (state.equals(outside) ? " is"
                    : " is inside") + " the " + flag + " " + keepOutOf + ", " + why + ": choose a directory outside"
                    + " it, such as /var/lib/vgpu");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new Refusal(given.origin() + " " + dir + " is not a directory");
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
            throw new Refusal("cannot create " + given.origin() + " " + dir + ": " + e);
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
     * One daemon per node; a second one is refused (exit 2) before it touches any socket: "another vgpu daemon
     * {@code what} (it holds the lock); {@code why}: stop the other one first". The lock is in the state directory
     * when there is one (the kubelet never empties it), else in the device-plugin directory.
     */
    static DirectoryLock lock(Path dir, String what, String why) {
        try {
            return DirectoryLock.tryAcquire(dir).orElseThrow(() -> new Refusal("another vgpu daemon " + what
                    + " (it holds " + dir.resolve(DirectoryLock.FILE) + "); " + why + ": stop the other one first"));
        } catch (java.io.IOException e) {
            throw new Refusal("cannot lock " + dir.resolve(DirectoryLock.FILE) + ": "
                    + e.getMessage());
        }
    }

    /**
     * The effective interval: the flag wins over the environment; errors name the flag or variable (a malformed
     * flag is a usage error, a malformed variable a refusal without usage help).
     */
    static RescanInterval rescanInterval(String flag, String env) {
        String source = flag != null ? "--rescan-interval" : RESCAN_ENV;
        String value = flag != null ? flag : env;
        try {
            return RescanInterval.parse(value);
        } catch (IllegalArgumentException e) {
            String message = "invalid " + source + " value \"" + value + "\": " + e.getMessage()
                    + " (use a Go duration such as 30s, 5m or 1h; 0 or empty disables rescans)";
            throw flag != null ? new UsageError(message) : new Refusal(message);
        }
    }

    /**
     * The metrics listener: the flag wins over the environment, which wins over {@value #DEFAULT_METRICS_ADDRESS};
     * an empty value turns it off. {@code HOST:PORT}, {@code :PORT} (every interface) or {@code [V6]:PORT}.
     */
    static Optional<InetSocketAddress> metricsAddress(String flag, String env) {
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
            throw flag != null ? new UsageError(message) : new Refusal(message);
        }
        return Optional.of(hostPart.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(hostPart, port));
    }

    /** The liveness deadline of a discovery round, Go duration syntax, positive. */
    static Duration scanDeadline(String value) {
        try {
            Duration d = Durations.parseGo(value);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("it must be positive");
            }
            return d;
        } catch (IllegalArgumentException e) {
            throw new UsageError("invalid --scan-deadline value \"" + value + "\": "
                    + e.getMessage());
        }
    }

    static void requireDirectory(String option, Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new Refusal(option + " " + dir + " is not a directory");
        }
    }
}
