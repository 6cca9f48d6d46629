package dev.vgpu.daemon;

import dev.vgpu.core.RescanInterval;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * {@code serve --mode dra}: the same checks of the shared flags as device-plugin mode, then {@link DraDaemon} instead
 * of {@link Daemon}. A state directory is required (it holds the prepared-claims checkpoint, so that Unprepare works
 * after a restart) and holds the single-daemon lock.
 */
final class DraServe {

    private DraServe() {
    }

    static int call(ServeCommand serve) {
        var env = serve.env;
        if (serve.args.has(ServeCommand.DEVICE_PLUGIN_DIR)) {
            serve.dra.settings(env); // refuses --device-plugin-dir first, as a usage error
        }
        serve.dra.requireWhatDraNeeds(env, serve.scan.resolveStateDir(env).isPresent());
        DraOptions.Settings dra = serve.dra.settings(env);
        RescanInterval interval = ServeCommand.rescanInterval(serve.rescanInterval,
                env.get(ServeCommand.RESCAN_ENV));
        serve.host.requireNamedFiles();
        if (serve.sample == null) {
            ServeCommand.requireDirectory("--host-root", serve.scan.hostRoot);
        }
        ServeCommand.requireDirectory("--kubelet-root", dra.kubeletRoot());
        serve.host.useSources(serve.scan.resolveSources(env));
        // The checkpoint is the daemon's own: not among the kubelet's files (DraPlugin.Builder.stateDir).
        Path stateDir = serve.scan.resolveStateDir(env).map(given -> serve.prepareStateDirectory(given,
                        dra.kubeletRoot(), "--kubelet-root", "whose directories the kubelet and its plugins own"))
                .orElseThrow(() -> new Refusal("--mode dra needs --state-dir (or "
                        + ScanOptions.STATE_ENV + "): the prepared-claims checkpoint lives there, so that claims can"
                        + " be unprepared after a restart (the manifests use /var/lib/vgpu)"));
        Optional<InetSocketAddress> metrics = ServeCommand.metricsAddress(serve.metricsAddress,
                env.get(ServeCommand.METRICS_ENV));
        Duration deadline = ServeCommand.scanDeadline(serve.scanDeadline);
        LiveConfig config = serve.configOption.load(env);
        serve.dra.requireAnApiServer(env);
        DirectoryLock lock = ServeCommand.lock(stateDir, "is already using the state directory " + stateDir,
                "one daemon per node");
        serve.startOnHost(lock, (hostRoot, names, onStop) -> DraDaemon.start(new DraDaemon.Config(hostRoot, names,
                interval, serve.host, metrics, deadline, stateDir, config, serve.failedScansLimit, dra),
                daemon -> onStop.accept(daemon::close)));
        return ServeCommand.KEEP_RUNNING;
    }
}
