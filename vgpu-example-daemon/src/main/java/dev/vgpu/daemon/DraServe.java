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
        DirectoryLock lock = lock(serve, stateDir);
        Samples.Materialized tree = null;
        try {
            tree = serve.sample == null ? null : Samples.materialize(serve.sample);
            Samples.Materialized written = tree;
            Path hostRoot = tree == null ? serve.scan.hostRoot : tree.root();
            DraDaemon.start(new DraDaemon.Config(hostRoot, tree == null ? serve.host.loadPciIds()
                    : Samples.pciIdsFor(serve.host), interval, serve.host, metrics, deadline, stateDir, config,
                    serve.failedScansLimit, dra), daemon -> Shutdown.onStop(() -> {
                        daemon.close();
                        lock.close();
                        if (written != null) {
                            written.close();
                        }
                    }));
        } catch (java.io.IOException e) {
            lock.close();
            throw new Refusal("--sample " + serve.sample + ": cannot write the sample host: "
                    + e.getMessage());
        } catch (DraDaemon.CannotStart e) {
            lock.close();
            if (tree != null) {
                tree.close();
            }
            throw new Refusal(e.getMessage());
        } catch (RuntimeException | Error e) {
            lock.close();
            if (tree != null) {
                tree.close();
            }
            throw e;
        }
        return ServeCommand.KEEP_RUNNING;
    }

    private static DirectoryLock lock(ServeCommand serve, Path dir) {
        try {
            return DirectoryLock.tryAcquire(dir).orElseThrow(() -> new Refusal(
                    "another vgpu daemon is already using the state directory " + dir + " (it holds "
                            + dir.resolve(DirectoryLock.FILE) + "); one daemon per node: stop the other one first"));
        } catch (java.io.IOException e) {
            throw new Refusal("cannot lock " + dir.resolve(DirectoryLock.FILE) + ": "
                    + e.getMessage());
        }
    }
}
