package dev.vgpu.daemon.serve;

import dev.vgpu.daemon.agent.NodeAdapter;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.dra.DraAdapter;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.daemon.scan.ScanOptions;
import dev.vgpu.dra.DriverName;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A DRA kubelet plugin: ResourceSlices and per-claim CDI specs ({@code --mode dra}). Its flags
 * ({@code --dra-driver}, {@code --kubelet-root}, {@code --node-name}, {@code --cdi-dir}, {@code --kubeconfig}) and
 * their environment variables ({@code VGPU_DRA_DRIVER}, {@code NODE_NAME}, {@code KUBECONFIG}) are read in this mode
 * only, since a pod often carries the variables anyway; {@code --device-plugin-dir} is refused rather than ignored.
 * A state directory is required (the prepared-claims checkpoint, so that Unprepare works after a restart) and holds
 * the single-daemon lock. The one class of {@code serve} that names DRA code: it is made only in this mode.
 *
 * @param driver      the driver name
 * @param kubeletRoot the kubelet's root
 * @param nodeName    the node, the pool name
 * @param cdiDir      where CDI specs go
 * @param kubeconfig  the kubeconfig file; empty = in-cluster
 */
record DraMode(DriverName driver, Path kubeletRoot, String nodeName, Path cdiDir, Optional<Path> kubeconfig)
        implements ServeMode {

    /** What {@code --mode} says for it. */
    static final String NAME = "dra";

    /**
     * The DRA settings: flags over the environment over defaults.
     *
     * @throws UsageError when {@code --device-plugin-dir} is given (an option of the other mode)
     * @throws Refusal     when the node name is missing, the driver name is not a DNS subdomain or the kubeconfig
     *                     cannot be read, naming the flag or variable
     */
    static DraMode of(ServeOptions options, Map<String, String> env) {
        CliArgs args = options.args;
        if (args.has(ServeOptions.DEVICE_PLUGIN_DIR)) {
            throw new UsageError("--device-plugin-dir is an option of device-plugin mode;"
                    + " in --mode dra the kubelet's directories come from --kubelet-root");
        }
        requireWhatDraNeeds(args, env, options.scan.resolveStateDir(env).isPresent());
        CliArgs.Given node = args.given(ServeOptions.NODE_NAME, env);
        CliArgs.Given driver = args.given(ServeOptions.DRIVER, env);
        DriverName name;
        try {
            name = driver == null || driver.value().isBlank() ? DriverName.DEFAULT
                    : new DriverName(driver.value().strip());
        } catch (IllegalArgumentException e) {
            throw new Refusal("invalid " + driver.origin() + " value: " + e.getMessage());
        }
        CliArgs.Given kubeconfig = args.given(ServeOptions.KUBECONFIG, env);
        Optional<Path> config = Optional.empty();
        if (kubeconfig != null && !kubeconfig.value().isBlank()) {
            Path file;
            try {
                file = args.has(ServeOptions.KUBECONFIG) ? options.kubeconfig
                        : Path.of(oneFile(kubeconfig.value().strip()));
            } catch (java.nio.file.InvalidPathException e) {
                throw new Refusal("invalid " + ServeOptions.KUBECONFIG_ENV + " value: " + e.getMessage());
            }
            HostOptions.requireReadableFile(kubeconfig.origin(), file,
                    "the API server's address and credentials come from it");
            config = Optional.of(file);
        }
        return new DraMode(name, options.kubeletRoot, node.value().strip(), options.cdiDir, config);
    }

    /**
     * The flags DRA mode cannot start without, named in one message: this node's name and a state directory.
     *
     * @param stateDir whether {@code --state-dir} or its variable gives one
     * @throws Refusal naming every missing flag and its variable
     */
    private static void requireWhatDraNeeds(CliArgs args, Map<String, String> env, boolean stateDir) {
        List<String> missing = new ArrayList<>();
        CliArgs.Given node = args.given(ServeOptions.NODE_NAME, env);
        if (node == null || node.value().isBlank()) {
            missing.add("--node-name or " + ServeOptions.NODE_ENV + " (this node's name; the manifests set it from the"
                    + " downward API, spec.nodeName)");
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
     */
    @Override
    public void requireItsServer(Map<String, String> env) {
        String serviceHost = env.get("KUBERNETES_SERVICE_HOST");
        if (kubeconfig.isEmpty() && (serviceHost == null || serviceHost.isBlank())) {
            throw new Refusal("--mode dra: not in a cluster (KUBERNETES_SERVICE_HOST is not set, so there is no"
                    + " in-cluster API server configuration): give the API server's kubeconfig with --kubeconfig or "
                    + ServeOptions.KUBECONFIG_ENV);
        }
    }

    @Override
    public void requireDirectories() {
        StateDirectories.requireDirectory("--kubelet-root", kubeletRoot);
    }

    /** Required: the checkpoint is the daemon's own, not among the kubelet's files (DraPlugin.Builder.stateDir). */
    @Override
    public Optional<Path> stateDirectory(Optional<ScanOptions.StateDir> given) {
        return Optional.of(given.map(dir -> StateDirectories.prepare(dir, kubeletRoot, "--kubelet-root",
                        "whose directories the kubelet and its plugins own"))
                .orElseThrow(() -> new Refusal("--mode dra needs --state-dir (or " + ScanOptions.STATE_ENV
                        + "): the prepared-claims checkpoint lives there, so that claims can be unprepared after a"
                        + " restart (the manifests use /var/lib/vgpu)")));
    }

    @Override
    public DirectoryLock lock(Optional<Path> stateDirectory) {
        Path dir = stateDirectory.orElseThrow();
        return DirectoryLock.take(dir, "is already using the state directory " + dir, "one daemon per node");
    }

    @Override
    public NodeAdapter.Opener opener(Optional<Path> stateDirectory) {
        return DraAdapter.opener(new DraAdapter.Settings(driver, kubeletRoot, nodeName, cdiDir, kubeconfig,
                stateDirectory.orElseThrow()));
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
        throw new Refusal(ServeOptions.KUBECONFIG_ENV + " lists several files (" + value + "): the daemon reads one"
                + " kubeconfig; name it with --kubeconfig or a " + ServeOptions.KUBECONFIG_ENV + " of one file");
    }
}
