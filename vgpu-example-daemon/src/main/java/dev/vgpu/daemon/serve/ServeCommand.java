package dev.vgpu.daemon.serve;

import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.daemon.agent.CannotStart;
import dev.vgpu.daemon.agent.NodeAgent;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.Subcommand;
import dev.vgpu.daemon.configure.LayoutOptions;
import dev.vgpu.daemon.configure.LayoutPreparation;
import dev.vgpu.daemon.process.Shutdown;
import dev.vgpu.daemon.scan.PciIdsDatabase;
import dev.vgpu.daemon.scan.Samples;
import dev.vgpu.hostfiles.HostFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code serve}: resolve the command line into one {@link ServeRequest}, take the single-daemon lock, start a
 * {@link NodeAgent} with the mode's adapter on the host (or a sample host), and keep running until SIGTERM or SIGINT.
 */
public final class ServeCommand implements Callable<Integer> {

    /** The subcommand: its table and how a parsed command line becomes a {@code ServeCommand}. */
    public static final Subcommand SUBCOMMAND = Subcommand.of(ServeOptions.TABLE,
            (args, console) -> new ServeCommand(args, console.env()));

    private final ServeOptions options;
    /** The process environment as seen by the command (injected for tests). */
    private final Map<String, String> env;

    ServeCommand(CliArgs args, Map<String, String> env) {
        this.options = new ServeOptions(args);
        this.env = Map.copyOf(env);
    }

    @Override
    public Integer call() {
        Optional<LayoutOptions.Selected> layout = LayoutOptions.resolve(options.args, env);
        if (layout.isPresent() && options.sample != null) {
            throw new Refusal("--vgpu-config and --sample: a layout is applied to --host-root, and a sample host is"
                    + " only read");
        }
        ServeRequest request = ServeRequest.resolve(options, env);
        NodeAgent.HostPreparation preparation = LayoutPreparation.of(layout, request.hostRoot(),
                options.args.flag(LayoutOptions.SIMULATED_HOST), options.devicePluginDir, request.stateDirectory());
        DirectoryLock lock = request.mode().lock(request.stateDirectory());
        start(request, lock, preparation);
        return Subcommand.KEEP_RUNNING;
    }

    /**
     * Starts the agent on the host it serves (the sample host, written now, or the host root) with its pci.ids names,
     * holding {@code lock}. The stop hook is in place before the first scan, so a SIGTERM during start cleans up too:
     * it closes the agent, the lock and the sample host. A start that fails closes the lock and the sample host; a
     * {@link CannotStart} becomes a {@link Refusal} with its message.
     */
    private static void start(ServeRequest request, DirectoryLock lock, NodeAgent.HostPreparation preparation) {
        Samples.Materialized tree = null;
        try {
            tree = request.sample() == null ? null : Samples.materialize(request.sample());
            Samples.Materialized written = tree;
            PciIdsDatabase names = tree == null ? request.host().loadPciIds() : Samples.pciIdsFor(request.host());
            Path root = tree == null ? request.hostRoot() : tree.root();
            Host host = Host.of(root, HostFiles.load()).withPciIds(names.names());
            NodeAgent.Settings settings = new NodeAgent.Settings(host,
                    new NodeAgent.PciIdsInUse(names.toString(), names.description()), request.sources(),
                    request.stateDirectory().map(StateDirectory::of), request.interval(), request.metricsAddress(),
                    request.scanDeadline(), request.failedScansLimit(), request.config(),
                    request.host(), preparation);
            NodeAgent.start(settings, request.mode().opener(request.stateDirectory()), agent -> Shutdown.onStop(() -> {
                agent.close();
                lock.close();
                if (written != null) {
                    written.close();
                }
            }));
        } catch (IOException e) {
            lock.close();
            throw new Refusal("--sample " + request.sample() + ": cannot write the sample host: " + e.getMessage());
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
}
