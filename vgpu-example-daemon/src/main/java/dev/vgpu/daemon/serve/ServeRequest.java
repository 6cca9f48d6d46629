package dev.vgpu.daemon.serve;

import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.internal.Durations;
import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.scan.HostOptions;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What one {@code serve} is asked to do, resolved against the environment and checked against the machine: the
 * command line's one value, with its sealed {@link ServeMode}. Flags win over environment variables, which win over
 * defaults; every refusal names the flag or variable at fault and is exit 2.
 *
 * @param sample           the bundled sample host to serve instead of the host root, or null
 * @param hostRoot         the directory standing for the host's {@code /} (unused with a sample)
 * @param host             the pci.ids and NVML options
 * @param sources          the sources to scan with
 * @param stateDirectory   where sources keep what they learned (prepared), and DRA mode its checkpoint
 * @param interval         the rescan policy
 * @param metricsAddress   where to serve metrics and probes; empty = off
 * @param scanDeadline     a round running longer than this fails the liveness probe
 * @param failedScansLimit this many failed rounds in a row fail the liveness probe; 0 = never
 * @param config           the configuration file in force, read now
 * @param mode             how the devices are offered
 */
record ServeRequest(String sample, Path hostRoot, HostOptions host, List<DeviceSource> sources,
                    Optional<Path> stateDirectory, RescanInterval interval, Optional<InetSocketAddress> metricsAddress,
                    Duration scanDeadline, int failedScansLimit, LiveConfig config, ServeMode mode) {

    /** Copies the sources; checks that nothing is missing. */
    ServeRequest {
        Objects.requireNonNull(hostRoot, "hostRoot");
        Objects.requireNonNull(host, "host");
        sources = List.copyOf(sources);
        Objects.requireNonNull(stateDirectory, "stateDirectory");
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(metricsAddress, "metricsAddress");
        Objects.requireNonNull(scanDeadline, "scanDeadline");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(mode, "mode");
    }

    /**
     * Resolves the command line: the mode and its flags first, then the settings both modes share, each checked in
     * the order an operator fixes them (the files named, the host root, the mode's directories, sources, the state
     * directory, metrics, the configuration file).
     *
     * @throws UsageError for a malformed flag, or a flag of the other mode
     * @throws Refusal    for everything else that stops the daemon before it starts
     */
    static ServeRequest resolve(ServeOptions options, Map<String, String> env) {
        ServeMode mode = ServeMode.resolve(options, env);
        RescanInterval interval = rescanInterval(options.rescanInterval, env.get(ServeOptions.RESCAN_ENV));
        options.host.requireNamedFiles();
        if (options.sample == null) {
            StateDirectories.requireDirectory("--host-root", options.scan.hostRoot);
        }
        mode.requireDirectories();
        List<DeviceSource> sources = options.scan.resolveSources(env);
        Optional<Path> stateDirectory = mode.stateDirectory(options.scan.resolveStateDir(env));
        Optional<InetSocketAddress> metrics = metricsAddress(options.metricsAddress,
                env.get(ServeOptions.METRICS_ENV));
        Duration deadline = scanDeadline(options.scanDeadline);
        LiveConfig config = options.configOption.load(env);
        mode.requireItsServer(env);
        return new ServeRequest(options.sample, options.scan.hostRoot, options.host, sources, stateDirectory,
                interval, metrics, deadline, options.failedScansLimit, config, mode);
    }

    /**
     * The effective interval: the flag wins over the environment; errors name the flag or variable (a malformed
     * flag is a usage error, a malformed variable a refusal without usage help).
     */
    static RescanInterval rescanInterval(String flag, String env) {
        String source = flag != null ? "--rescan-interval" : ServeOptions.RESCAN_ENV;
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
     * The metrics listener: the flag wins over the environment, which wins over {@value ServeOptions#DEFAULT_METRICS_ADDRESS};
     * an empty value turns it off. {@code HOST:PORT}, {@code :PORT} (every interface) or {@code [V6]:PORT}.
     */
    static Optional<InetSocketAddress> metricsAddress(String flag, String env) {
        String source = flag != null ? "--metrics-address" : env != null ? ServeOptions.METRICS_ENV : null;
        String value = (flag != null ? flag : env != null ? env : ServeOptions.DEFAULT_METRICS_ADDRESS).strip();
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
}
