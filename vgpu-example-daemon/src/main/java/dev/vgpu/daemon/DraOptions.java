package dev.vgpu.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code serve --mode} and the flags of the DRA mode (README, "{@code serve} options"). One mode per daemon, so a
 * device is never offered both as an extended resource and in a ResourceSlice. A DRA flag given on the command line in
 * device-plugin mode, or {@code --device-plugin-dir} in DRA mode, is refused (exit 2) rather than ignored: the
 * operator meant something the other mode does. The environment variables ({@code NODE_NAME}, {@code KUBECONFIG},
 * {@code VGPU_DRA_DRIVER}) are read in DRA mode only, since a pod often carries them anyway.
 */
final class DraOptions {

    /** The environment variable behind {@code --mode}. */
    static final String MODE_ENV = "VGPU_MODE";
    /** The environment variable behind {@code --dra-driver}. */
    static final String DRIVER_ENV = "VGPU_DRA_DRIVER";
    /** The environment variable behind {@code --node-name} (the downward API's {@code spec.nodeName}). */
    static final String NODE_ENV = "NODE_NAME";
    /** The environment variable behind {@code --kubeconfig}. */
    static final String KUBECONFIG_ENV = "KUBECONFIG";

    /** How the daemon offers devices. */
    enum Mode {
        /** The kubelet device-plugin API: one extended resource per device kind (the default). */
        DEVICE_PLUGIN("device-plugin"),
        /** A DRA kubelet plugin: ResourceSlices and per-claim CDI specs. */
        DRA("dra");

        final String text;

        Mode(String text) {
            this.text = text;
        }
    }

    // --dra-driver's default is applied in settings(), not by the table: a table default would stand in front of
    // VGPU_DRA_DRIVER. A default never counts as given (device-plugin mode refuses only flags on the command line).
    static final CliOption MODE = CliOption.value("--mode", "MODE", "device-plugin (the default) or dra: serve the"
            + " kubelet device-plugin API, or be a DRA kubelet plugin publishing ResourceSlices; overrides " + MODE_ENV
            + ".").withEnv(MODE_ENV);
    static final CliOption DRIVER = CliOption.value("--dra-driver", "NAME", "dra mode: the DRA driver name, a DNS"
            + " subdomain of at most 63 characters; overrides " + DRIVER_ENV + " (default: gpu.vgpu.dev).")
            .withEnv(DRIVER_ENV);
    static final CliOption KUBELET_ROOT = CliOption.value("--kubelet-root", "DIR", "dra mode: the kubelet's root"
            + " directory; plugins_registry/ and plugins/ are in it (default: ${DEFAULT}).")
            .withDefault("/var/lib/kubelet");
    static final CliOption NODE_NAME = CliOption.value("--node-name", "NAME", "dra mode: this node's name, the pool of"
            + " its ResourceSlices; overrides " + NODE_ENV + " (required in dra mode).").withEnv(NODE_ENV);
    static final CliOption CDI_DIR = CliOption.value("--cdi-dir", "DIR", "dra mode: where the per-claim CDI specs are"
            + " written (default: ${DEFAULT}).").withDefault("/var/run/cdi");
    static final CliOption KUBECONFIG = CliOption.value("--kubeconfig", "FILE", "dra mode: the API server's kubeconfig;"
            + " overrides " + KUBECONFIG_ENV + " (default: the pod's service account, in-cluster).")
            .withEnv(KUBECONFIG_ENV);
    /** Flags of DRA mode only. */
    static final List<CliOption> DRA_ONLY = List.of(DRIVER, KUBELET_ROOT, NODE_NAME, CDI_DIR, KUBECONFIG);
    /** The rows of {@code serve}: the mode and the DRA flags. */
    static final List<CliOption> OPTIONS = CliCommand.join(List.of(MODE), DRA_ONLY);

    private final CliArgs args;
    private final Path kubeletRoot;
    private final Path cdiDir;
    /** {@code --kubeconfig} as given, converted with the command line; null when not given. */
    private final Path kubeconfigFlag;

    DraOptions(CliArgs args) {
        this.args = args;
        kubeletRoot = args.path(KUBELET_ROOT);
        cdiDir = args.path(CDI_DIR);
        kubeconfigFlag = args.path(KUBECONFIG);
    }

    /**
     * The mode: the flag, else {@value #MODE_ENV}, else device-plugin.
     *
     * @throws UsageError for an unknown flag value; {@link Refusal} for an unknown variable value
     */
    Mode mode(Map<String, String> env) {
        CliArgs.Given given = args.given(MODE, env);
        if (given == null || given.value().isBlank()) {
            return Mode.DEVICE_PLUGIN;
        }
        String value = given.value();
        boolean flag = args.has(MODE);
        for (Mode m : Mode.values()) {
            if (m.text.equals(value.strip())) {
                return m;
            }
        }
        String message = "invalid " + given.origin() + " value \""
                + dev.vgpu.core.internal.Printable.of(value, 80) + "\": use device-plugin or dra";
        throw flag ? new UsageError(message) : new Refusal(message);
    }

    /** In device-plugin mode: a DRA flag given on the command line is refused, naming it. */
    void refuseInDevicePluginMode() {
        for (CliOption option : DRA_ONLY) {
            if (args.has(option)) {
                String flag = option.name();
                throw new UsageError(flag + " is an option of --mode dra; this daemon"
                        + " runs in device-plugin mode (add --mode dra, or drop " + flag + ")");
            }
        }
    }

    /**
     * The flags DRA mode cannot start without, named in one message: this node's name and a state directory.
     *
     * @param stateDir whether {@code --state-dir} or its variable gives one
     * @throws Refusal naming every missing flag and its variable
     */
    void requireWhatDraNeeds(Map<String, String> env, boolean stateDir) {
        List<String> missing = new java.util.ArrayList<>();
        CliArgs.Given node = args.given(NODE_NAME, env);
        if (node == null || node.value().isBlank()) {
            missing.add("--node-name or " + NODE_ENV + " (this node's name; the manifests set it from the downward API,"
                    + " spec.nodeName)");
        }
        if (!stateDir) {
            missing.add("--state-dir or " + ScanOptions.STATE_ENV + " (the prepared-claims checkpoint lives there, so"
                    + " that claims can be unprepared after a restart; the manifests use /var/lib/vgpu)");
        }
        if (!missing.isEmpty()) {
            throw new Refusal("--mode dra needs " + String.join("; and ", missing));
        }
    }

    /**
     * Outside a cluster (no {@code KUBERNETES_SERVICE_HOST}, which the kubelet sets in every pod) there is no
     * in-cluster configuration: without a kubeconfig the API server could never be reached, so say so instead of
     * retrying.
     *
     * @throws Refusal naming the flag and its variable
     */
    void requireAnApiServer(Map<String, String> env) {
        CliArgs.Given kubeconfig = args.given(KUBECONFIG, env);
        String serviceHost = env.get("KUBERNETES_SERVICE_HOST");
        if ((kubeconfig == null || kubeconfig.value().isBlank()) && (serviceHost == null || serviceHost.isBlank())) {
            throw new Refusal("--mode dra: not in a cluster (KUBERNETES_SERVICE_HOST is not set, so there is no"
                    + " in-cluster API server configuration): give the API server's kubeconfig with --kubeconfig or "
                    + KUBECONFIG_ENV);
        }
    }

    /**
     * What DRA mode runs with, checked.
     *
     * @param driver      the driver name
     * @param kubeletRoot the kubelet's root
     * @param nodeName    the node, the pool name
     * @param cdiDir      where CDI specs go
     * @param kubeconfig  the kubeconfig file; empty = in-cluster
     */
    record Settings(dev.vgpu.dra.DriverName driver, Path kubeletRoot, String nodeName, Path cdiDir,
                    Optional<Path> kubeconfig) {
    }

    /**
     * The DRA settings: flags over the environment over defaults.
     *
     * @throws UsageError when {@code --device-plugin-dir} is given (an option of the other mode)
     * @throws Refusal     when the node name is missing, the driver name is not a DNS subdomain or the kubeconfig
     *                     cannot be read, naming the flag or variable
     */
    Settings settings(Map<String, String> env) {
        if (args.has(ServeCommand.DEVICE_PLUGIN_DIR)) {
            throw new UsageError("--device-plugin-dir is an option of device-plugin mode;"
                    + " in --mode dra the kubelet's directories come from --kubelet-root");
        }
        CliArgs.Given node = args.given(NODE_NAME, env);
        if (node == null || node.value().isBlank()) {
            throw new Refusal("--mode dra needs this node's name: give --node-name or set "
                    + NODE_ENV + " (the manifests set it from the downward API, spec.nodeName)");
        }
        CliArgs.Given driver = args.given(DRIVER, env);
        dev.vgpu.dra.DriverName name;
        try {
            name = driver == null || driver.value().isBlank() ? dev.vgpu.dra.DriverName.DEFAULT
                    : new dev.vgpu.dra.DriverName(driver.value().strip());
        } catch (IllegalArgumentException e) {
            throw new Refusal("invalid " + driver.origin() + " value: " + e.getMessage());
        }
        CliArgs.Given kubeconfig = args.given(KUBECONFIG, env);
        Optional<Path> config = Optional.empty();
        if (kubeconfig != null && !kubeconfig.value().isBlank()) {
            Path file;
            try {
                file = args.has(KUBECONFIG) ? kubeconfigFlag : Path.of(oneFile(kubeconfig.value().strip()));
            } catch (java.nio.file.InvalidPathException e) {
                throw new Refusal("invalid " + KUBECONFIG_ENV + " value: " + e.getMessage());
            }
            HostOptions.requireReadableFile(kubeconfig.origin(), file,
                    "the API server's address and credentials come from it");
            config = Optional.of(file);
        }
        return new Settings(name, kubeletRoot, node.value().strip(), cdiDir, config);
    }

    /**
     * The one file a {@code KUBECONFIG} value names: kubectl reads it as a list separated by the path separator and
     * drops empty entries ({@code /x/one:} is one file); the daemon reads one kubeconfig, so a list of several is
     * refused, saying so rather than that a file named {@code a:b} does not exist. A value that is itself a file is
     * that file.
     */
    static String oneFile(String value) {
        if (value.indexOf(java.io.File.pathSeparatorChar) < 0 || Files.isRegularFile(Path.of(value))) {
            return value;
        }
        String separator = java.util.regex.Pattern.quote(java.io.File.pathSeparator);
        List<String> files = java.util.Arrays.stream(value.split(separator)).filter(f -> !f.isBlank()).toList();
        if (files.size() == 1) {
            return files.get(0);
        }
        throw new Refusal(KUBECONFIG_ENV + " lists several files (" + value + "): the daemon reads one kubeconfig;"
                + " name it with --kubeconfig or a " + KUBECONFIG_ENV + " of one file");
    }
}
