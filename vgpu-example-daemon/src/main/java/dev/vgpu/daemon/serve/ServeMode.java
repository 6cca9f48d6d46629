package dev.vgpu.daemon.serve;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.daemon.agent.NodeAdapter;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.scan.ScanOptions;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * How {@code serve} offers devices (README, "{@code serve} options"): one mode per daemon, so a device is never
 * offered both as an extended resource and in a ResourceSlice. Each mode knows its own flags, its directories, where
 * its state and its single-daemon lock live, and which {@link NodeAdapter} serves it. Only {@link DraMode} names the
 * DRA adapter (and through it vgpu-dra and fabric8); device-plugin mode never makes one, so it never reaches them
 * (ArchitectureTest).
 */
sealed interface ServeMode permits DevicePluginMode, DraMode {

    /**
     * The mode {@code --mode}, else {@code VGPU_MODE}, asks for (device-plugin when neither does), read with its own
     * flags: a flag of the other mode given on the command line is refused, naming it.
     *
     * @throws UsageError for an unknown {@code --mode} or a flag of the other mode
     * @throws Refusal    for an unknown {@code VGPU_MODE}, or what the mode's settings refuse
     */
    static ServeMode resolve(ServeOptions options, Map<String, String> env) {
        CliArgs args = options.args;
        CliArgs.Given given = args.given(ServeOptions.MODE, env);
        String value = given == null ? "" : given.value().strip();
        if (value.isEmpty() || value.equals(DevicePluginMode.NAME)) {
            return DevicePluginMode.of(options);
        }
        if (value.equals(DraMode.NAME)) {
            return DraMode.of(options, env);
        }
        String message = "invalid " + given.origin() + " value \"" + Printable.of(given.value(), 80)
                + "\": use device-plugin or dra";
        throw args.has(ServeOptions.MODE) ? new UsageError(message) : new Refusal(message);
    }

    /**
     * Refuses a directory of the mode that is not there (after the host root's check).
     *
     * @throws Refusal naming the flag
     */
    void requireDirectories();

    /**
     * Refuses to start where what the mode talks to beyond this node cannot be reached (checked after the
     * configuration is read); nothing to check by default.
     *
     * @throws Refusal naming the flag or variable that would fix it
     */
    default void requireItsServer(Map<String, String> env) {
    }

    /**
     * The state directory to serve with, prepared (created owner-only when missing), kept out of the directories the
     * kubelet owns.
     *
     * @throws Refusal when it is inside them, cannot be made, or is missing where the mode needs one
     */
    Optional<Path> stateDirectory(Optional<ScanOptions.StateDir> given);

    /**
     * The single-daemon lock, taken now (in the state directory when there is one: the kubelet never empties it).
     *
     * @throws Refusal when another daemon holds it, saying so
     */
    DirectoryLock lock(Optional<Path> stateDirectory);

    /** What serves this mode, with the state directory it was given. */
    NodeAdapter.Opener opener(Optional<Path> stateDirectory);
}
