package dev.vgpu.daemon.demo;

import dev.vgpu.core.internal.Durations;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliCommand;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.cli.Subcommand;
import dev.vgpu.daemon.cli.UsageError;
import dev.vgpu.daemon.process.Shutdown;
import dev.vgpu.daemon.process.Signals;
import dev.vgpu.kubelet.standin.StandInKubelet;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code kubelet}: the stand-in kubelet on a directory, for trying {@code serve} from a shell. It prints in words what
 * a kubelet sees (registrations, device lists, health changes, streams that end) and restarts on Enter, on
 * {@code SIGHUP} or every {@code --restart-every}, as a real kubelet's restart looks to a plugin (the plugin sockets
 * are deleted, a new {@code kubelet.sock} appears). Runs until SIGTERM or SIGINT.
 *
 * <p>Threads: the main thread owns the kubelet's view and runs every restart; the JVM's signal thread and the
 * {@code vgpu-kubelet-stdin} thread only set {@code restart}; the shutdown hook sets {@code stopped} and closes the
 * kubelet.
 */
public final class KubeletCommand implements Callable<Integer> {

    static final CliOption DIR = CliOption.value("--device-plugin-dir", "DIR", "Where to serve kubelet.sock; created"
            + " when missing. Give 'serve' the same directory.").asRequired();
    static final CliOption RESTART_EVERY = CliOption.value("--restart-every", "DURATION", "Also restart after every"
            + " period of this length (Go duration, e.g. 30s; at least 1s).");
    /** {@code kubelet}'s table. */
    static final CliCommand TABLE = new CliCommand("kubelet", List.of(
            "Run a stand-in kubelet on a directory and print what it sees, to try 'serve' from a shell.",
            "Registrations, device lists and health changes are printed as they arrive. Enter or SIGHUP restarts it"
                    + " (plugin sockets deleted, a new kubelet.sock), as a real kubelet's restart looks to a plugin;"
                    + " SIGTERM or Ctrl-C stops it. Never point it at a real kubelet's directory: it refuses one whose"
                    + " kubelet.sock answers."),
            List.of(DIR, RESTART_EVERY));

    /** The subcommand: its table and how a parsed command line becomes a {@code KubeletCommand}. */
    public static final Subcommand SUBCOMMAND = Subcommand.of(TABLE, (args, console) -> new KubeletCommand(args,
            console.out()));

    /** How often the loop looks at the restart flags when nothing else happens. */
    private static final Duration TICK = Duration.ofMillis(200);

    final Path dir;
    final String restartEvery;
    private final PrintWriter out;

    private final AtomicBoolean restart = new AtomicBoolean();
    private final AtomicBoolean stopped = new AtomicBoolean();

    KubeletCommand(CliArgs args, PrintWriter out) {
        dir = args.path(DIR);
        restartEvery = args.text(RESTART_EVERY);
        this.out = out;
    }

    @Override
    public Integer call() throws Exception {
        Duration period = period();
        refuseALiveKubelet();
        StandInKubelet kubelet;
        try {
            kubelet = StandInKubelet.start(dir);
        } catch (java.io.UncheckedIOException e) {
            throw new Refusal("--device-plugin-dir " + dir + ": " + e.getMessage()
                    + (e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")"));
        }
        Shutdown.onStop(() -> {
            stopped.set(true);
            kubelet.close();
            out.println("stand-in kubelet stopped; " + kubelet.socket() + " removed");
            out.flush();
        });
        Signals.onHangup(() -> restart.set(true));
        readEnterFromStdin();
        out.println("stand-in kubelet serving " + kubelet.socket() + (period == null ? "" : ", restarting every "
                + GoDurations.format(period)) + "; Enter or SIGHUP (kill -HUP " + ProcessHandle.current().pid()
                + ") restarts it, Ctrl-C stops it");
        out.flush();
        watch(kubelet, out, period);
        // Stopped by the shutdown hook, which ends the process with status 0: main must not exit on its own.
        return Subcommand.KEEP_RUNNING;
    }

    /** The main loop: prints every change, restarts when asked; returns once stopped. */
    private void watch(StandInKubelet kubelet, PrintWriter out, Duration period) throws InterruptedException {
        KubeletView last = KubeletView.empty();
        AtomicInteger restarts = new AtomicInteger();
        long nextRestart = period == null ? Long.MAX_VALUE : System.nanoTime() + period.toNanos();
        while (!stopped.get()) {
            KubeletView seen = last;
            long due = nextRestart;
            try {
                kubelet.await(TICK, k -> !KubeletView.of(k).equals(seen) || restart.get() || stopped.get()
                        || System.nanoTime() - due >= 0);
            } catch (IllegalStateException quiet) {
                continue; // nothing within a tick: look at the flags again
            }
            if (stopped.get()) {
                return;
            }
            KubeletView now = KubeletView.of(kubelet);
            print(out, now.changesSince(last));
            last = now;
            if (restart.getAndSet(false) || System.nanoTime() - nextRestart >= 0) {
                out.printf("restarting the kubelet (restart %d): every plugin connection dropped, the plugin sockets "
                        + "deleted, a new %s%n", restarts.incrementAndGet(), kubelet.socket());
                out.flush();
                try {
                    kubelet.restart();
                } catch (IOException e) {
                    out.println("the restart failed: " + e.getMessage());
                }
                last = last.restarted();
                if (period != null) {
                    nextRestart = System.nanoTime() + period.toNanos();
                }
            }
        }
    }

    private static void print(PrintWriter out, List<String> lines) {
        lines.forEach(out::println);
        out.flush();
    }

    /** Enter on stdin asks for a restart; a closed stdin (a script, CI) only ends this thread. */
    private void readEnterFromStdin() {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (in.readLine() != null) {
                    restart.set(true);
                }
            } catch (IOException e) {
                // no stdin: restarts come from SIGHUP and --restart-every only
            }
        }, "vgpu-kubelet-stdin");
        reader.setDaemon(true);
        reader.start();
    }

    private Duration period() {
        if (restartEvery == null) {
            return null;
        }
        try {
            Duration d = Durations.parseGo(restartEvery);
            if (d.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("it must be at least 1s");
            }
            return d;
        } catch (IllegalArgumentException e) {
            throw new UsageError("invalid --restart-every value \"" + restartEvery
                    + "\": " + e.getMessage());
        }
    }

    /** A {@code kubelet.sock} that accepts a connection belongs to a running kubelet: never replace it. */
    private void refuseALiveKubelet() {
        Path socket = dir.resolve(StandInKubelet.SOCKET);
        if (!Files.exists(socket)) {
            return;
        }
        boolean answers;
        try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            answers = probe.isConnected();
        } catch (IOException | UnsupportedOperationException e) {
            answers = false; // stale or not a socket: the stand-in replaces it
        }
        if (answers) {
            throw new Refusal(socket + " answers: a kubelet is running there, and the stand-in"
                    + " kubelet would replace its socket; give another --device-plugin-dir (and 'serve' the same)");
        }
    }
}
