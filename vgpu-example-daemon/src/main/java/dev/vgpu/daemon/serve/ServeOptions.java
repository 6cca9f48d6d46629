package dev.vgpu.daemon.serve;

import dev.vgpu.daemon.agent.NodeAgent;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.configure.LayoutOptions;
import dev.vgpu.daemon.scan.ConfigOption;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.Samples;
import dev.vgpu.daemon.scan.ScanOptions;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code serve}'s option table and its command line, each value converted (a path, a number) and nothing checked
 * against the machine or the environment yet: what {@link ServeRequest#resolve} turns into a request. One table for
 * both modes: the mode chooses which rows apply ({@link ServeMode}).
 */
public final class ServeOptions {

    /** The environment variable that enables periodic rediscovery. */
    public static final String RESCAN_ENV = "VFIO_VGPU_RESCAN_INTERVAL";
    /** The environment variable naming the metrics address. */
    public static final String METRICS_ENV = "VGPU_METRICS_ADDRESS";
    /**
     * Where {@code --metrics-address} listens unless told otherwise (metrics, {@code /healthz}, {@code /readyz});
     * the manifests in {@code deploy/} pass it explicitly and probe its port. Documented in the README.
     */
    public static final String DEFAULT_METRICS_ADDRESS = "0.0.0.0:9410";
    /** The environment variable behind {@code --mode}. */
    public static final String MODE_ENV = "VGPU_MODE";
    /** The environment variable behind {@code --dra-driver}. */
    public static final String DRIVER_ENV = "VGPU_DRA_DRIVER";
    /** The environment variable behind {@code --node-name} (the downward API's {@code spec.nodeName}). */
    public static final String NODE_ENV = "NODE_NAME";
    /** The environment variable behind {@code --kubeconfig}. */
    public static final String KUBECONFIG_ENV = "KUBECONFIG";

    public static final CliOption DEVICE_PLUGIN_DIR = CliOption.value("--device-plugin-dir", "DIR", "Where kubelet.sock lives"
            + " and plugin sockets are created (default: ${DEFAULT}).").withDefault("/var/lib/kubelet/device-plugins");
    public static final CliOption RESCAN_INTERVAL = CliOption.value("--rescan-interval", "DURATION", "Rescan period, Go"
            + " duration syntax; overrides " + RESCAN_ENV + ".").withEnv(RESCAN_ENV);
    public static final CliOption METRICS_ADDRESS = CliOption.value("--metrics-address", "HOST:PORT", "Serve /metrics,"
            + " /healthz and /readyz over HTTP here; overrides " + METRICS_ENV + " (default: " + DEFAULT_METRICS_ADDRESS
            + ", all interfaces; empty = off).").withEnv(METRICS_ENV);
    public static final CliOption SCAN_DEADLINE = CliOption.value("--scan-deadline", "DURATION", "A discovery round running"
            + " longer than this fails /healthz (default: ${DEFAULT}).").withDefault("1m");
    public static final CliOption SAMPLE = CliOption.value("--sample", "NAME", "Serve a sample host bundled in the jar instead"
            + " of --host-root, written to a temporary directory that is deleted at exit, to try serve, its metrics,"
            + " probes and SIGHUP without a GPU: " + Samples.NAMES + ".");
    public static final CliOption FAILED_SCANS = CliOption.value("--unhealthy-after-failed-scans", "N", "This many discovery"
            + " rounds in a row in which a source failed fail /healthz, so the kubelet restarts the pod; 0 = never"
            + " (default: ${DEFAULT}).").withDefault(Integer.toString(NodeAgent.DEFAULT_FAILED_SCANS_LIMIT));
    // --dra-driver's default is applied by DraMode, not by the table: a table default would stand in front of
    // VGPU_DRA_DRIVER. A default never counts as given (device-plugin mode refuses only flags on the command line).
    public static final CliOption MODE = CliOption.value("--mode", "MODE", "device-plugin (the default) or dra: serve the"
            + " kubelet device-plugin API, or be a DRA kubelet plugin publishing ResourceSlices; overrides " + MODE_ENV
            + ".").withEnv(MODE_ENV);
    public static final CliOption DRIVER = CliOption.value("--dra-driver", "NAME", "dra mode: the DRA driver name, a DNS"
            + " subdomain of at most 63 characters; overrides " + DRIVER_ENV + " (default: gpu.vgpu.dev).")
            .withEnv(DRIVER_ENV);
    public static final CliOption KUBELET_ROOT = CliOption.value("--kubelet-root", "DIR", "dra mode: the kubelet's root"
            + " directory; plugins_registry/ and plugins/ are in it (default: ${DEFAULT}).")
            .withDefault("/var/lib/kubelet");
    public static final CliOption NODE_NAME = CliOption.value("--node-name", "NAME", "dra mode: this node's name, the pool of"
            + " its ResourceSlices; overrides " + NODE_ENV + " (required in dra mode).").withEnv(NODE_ENV);
    public static final CliOption CDI_DIR = CliOption.value("--cdi-dir", "DIR", "dra mode: where the per-claim CDI specs are"
            + " written (default: ${DEFAULT}).").withDefault("/var/run/cdi");
    public static final CliOption KUBECONFIG = CliOption.value("--kubeconfig", "FILE", "dra mode: the API server's kubeconfig;"
            + " overrides " + KUBECONFIG_ENV + " (default: the pod's service account, in-cluster).")
            .withEnv(KUBECONFIG_ENV);
    /** Flags of DRA mode only. */
    public static final List<CliOption> DRA_ONLY = List.of(DRIVER, KUBELET_ROOT, NODE_NAME, CDI_DIR, KUBECONFIG);

    /** {@code serve}'s table. */
    public static final CliCommand TABLE = new CliCommand("serve", List.of("Run the device plugin (the default command).",
            "Environment: VFIO_VGPU_RESCAN_INTERVAL (Go duration, e.g. 30s or 5m; unset, empty or 0 = no rescans;"
                    + " positive values below 5s are raised to 5s), overridden by --rescan-interval; VGPU_SOURCES,"
                    + " overridden by --sources; VGPU_STATE_DIR, overridden by --state-dir; VGPU_CONFIG, overridden by"
                    + " --config; VGPU_CONFIG_YAML (a configuration's text), used when neither names a file.",
            "SIGHUP rescans at once and reads the --config file again."),
            CliCommand.join(ScanOptions.OPTIONS, HostOptions.OPTIONS, ConfigOption.OPTIONS, LayoutOptions.OPTIONS,
                    List.of(MODE), DRA_ONLY,
                    List.of(DEVICE_PLUGIN_DIR, RESCAN_INTERVAL, METRICS_ADDRESS, SCAN_DEADLINE, SAMPLE, FAILED_SCANS)));

    final CliArgs args;
    final ScanOptions scan;
    final HostOptions host;
    final ConfigOption configOption;
    final Path devicePluginDir;
    final String rescanInterval;
    final String metricsAddress;
    final String scanDeadline;
    final String sample;
    final int failedScansLimit;
    final Path kubeletRoot;
    final Path cdiDir;
    /** {@code --kubeconfig} as given, converted with the command line; null when not given. */
    final Path kubeconfig;

    /**
     * Converts the command line.
     *
     * @throws UsageError for a value that does not convert, or flags that exclude each other
     */
    ServeOptions(CliArgs args) {
        this.args = args;
        scan = new ScanOptions(args);
        host = HostOptions.of(args);
        configOption = new ConfigOption(args);
        devicePluginDir = args.path(DEVICE_PLUGIN_DIR);
        rescanInterval = args.text(RESCAN_INTERVAL);
        metricsAddress = args.text(METRICS_ADDRESS);
        scanDeadline = args.text(SCAN_DEADLINE);
        sample = Samples.requireKnown(args.text(SAMPLE));
        failedScansLimit = args.integer(FAILED_SCANS);
        kubeletRoot = args.path(KUBELET_ROOT);
        cdiDir = args.path(CDI_DIR);
        kubeconfig = args.path(KUBECONFIG);
        // What the command line alone decides, for both modes.
        if (sample != null && args.has(ScanOptions.HOST_ROOT)) {
            throw new UsageError("--sample and --host-root: give one of them");
        }
        if (args.flag(LayoutOptions.SIMULATED_HOST) && !args.has(ScanOptions.HOST_ROOT)) {
            throw new UsageError("--simulated-host needs --host-root: the simulator's tree is never /");
        }
        if (failedScansLimit < 0) {
            throw new UsageError("invalid --unhealthy-after-failed-scans value " + failedScansLimit
                    + ": a count of rounds, 0 or more (0 = never)");
        }
    }
}
