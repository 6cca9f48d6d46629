package dev.vgpu.daemon.serve;

import dev.vgpu.daemon.agent.NodeAdapter;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.deviceplugin.DevicePluginAdapter;
import dev.vgpu.daemon.scan.ScanOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The kubelet device-plugin API: one extended resource per device kind, one plugin socket each in the kubelet's
 * device-plugin directory (the default mode).
 *
 * @param devicePluginDir where {@code kubelet.sock} is and the plugin sockets are made
 */
record DevicePluginMode(Path devicePluginDir) implements ServeMode {

    /** What {@code --mode} says for it. */
    static final String NAME = "device-plugin";

    /**
     * The mode as the command line gives it.
     *
     * @throws UsageError when a flag of DRA mode was given on the command line, naming it
     */
    static DevicePluginMode of(ServeOptions options) {
        for (CliOption option : ServeOptions.DRA_ONLY) {
            if (options.args.has(option)) {
                String flag = option.name();
                throw new UsageError(flag + " is an option of --mode dra; this daemon"
                        + " runs in device-plugin mode (add --mode dra, or drop " + flag + ")");
            }
        }
        return new DevicePluginMode(options.devicePluginDir);
    }

    @Override
    public void requireDirectories() {
        if (!Files.isDirectory(devicePluginDir)) {
            throw new Refusal("--device-plugin-dir " + devicePluginDir
                    + " is not a directory (is the kubelet's device-plugins directory mounted?)");
        }
    }

    @Override
    public Optional<Path> stateDirectory(Optional<ScanOptions.StateDir> given) {
        return given.map(dir -> StateDirectories.prepare(dir, devicePluginDir, "--device-plugin-dir",
                "which the kubelet empties when it restarts"));
    }

    @Override
    public DirectoryLock lock(Optional<Path> stateDirectory) {
        return DirectoryLock.take(stateDirectory.orElse(devicePluginDir), "is already serving " + devicePluginDir,
                "two daemons on one device-plugin directory would replace each other's sockets");
    }

    @Override
    public NodeAdapter.Opener opener(Optional<Path> stateDirectory) {
        return DevicePluginAdapter.opener(devicePluginDir);
    }
}
