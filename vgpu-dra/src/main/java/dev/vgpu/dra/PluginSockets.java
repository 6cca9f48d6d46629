package dev.vgpu.dra;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import io.grpc.BindableService;
import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's two sockets (docs/DRA.md §1): the DRA service on {@code plugins/<driver>/dra.sock} and the
 * registration on {@code plugins_registry/<driver>-reg.sock}, served DRA first so that once the kubelet finds the
 * plugin its endpoint answers. Each check ({@link #read} on a lane, {@link #checked} in the owner) compares the file
 * at each path with the socket this process bound there (its file key, so a socket of another process moved there
 * counts as replaced): a socket gone or replaced is served again, and then the registration socket too, so that the
 * kubelet's plugin watcher sees a new one and registers the plugin again. {@link #missing} says which socket a check
 * found gone until it is back ({@code /readyz}). Only a socket this process bound, and still there, is ever deleted.
 *
 * <p>Threads: owned by the plugin's serial context (binding happens there, as the device plugin's does); a server's
 * shutdown, which blocks, is handed back as a task for a lane.
 */
final class PluginSockets {

    private static final Logger LOG = LoggerFactory.getLogger(PluginSockets.class);

    /** One socket: its path, what it serves, and what this process bound there. */
    private static final class Served {
        final String what;
        final Path path;
        final List<BindableService> services;
        Server server;
        Object key;
        String failure = "";

        Served(String what, Path path, List<BindableService> services) {
            this.what = what;
            this.path = path;
            this.services = services;
        }
    }

    /**
     * What one check read: each socket path's file key (null: nothing, or not a socket), and how many times the
     * sockets had been served when the read was asked for (a read older than the latest bind says nothing).
     */
    record Reading(int served, Map<Path, Object> keys) {
    }

    private final UnixDomainTransport transport;
    private final Runnable registrationLost;
    private final Served dra;
    private final Served registration;
    // Owner context only.
    private int served;

    /**
     * @param registrationLost told in the context when the registration socket was served again: the kubelet has to
     *                         register the plugin anew
     */
    PluginSockets(PluginPaths paths, UnixDomainTransport transport, List<BindableService> draServices,
                  BindableService registrationService, Runnable registrationLost) {
        this.transport = transport;
        this.registrationLost = registrationLost;
        this.dra = new Served("DRA service", paths.draSocket(), draServices);
        this.registration = new Served("registration", paths.registrationSocket(), List.of(registrationService));
    }

    /**
     * Serves both sockets for the first time. In the context.
     *
     * @throws IOException when one cannot be bound (the other is shut down again)
     */
    void start() throws IOException {
        try {
            bind(dra);
            bind(registration);
        } catch (IOException e) {
            stop().run();
            throw e;
        }
        served++;
    }

    /** How many times the sockets were served: a check records it with what it reads. In the context. */
    int served() {
        return served;
    }

    /** On a lane: the file at each socket path now. */
    static Reading read(int served, List<Path> sockets) {
        Map<Path, Object> keys = new LinkedHashMap<>();
        sockets.forEach(p -> keys.put(p, UnixDomainTransport.socketKey(p)));
        return new Reading(served, keys);
    }

    /**
     * In the context: what a check read. Serves again a socket found gone or replaced, and then the registration
     * socket; answers the shutdowns of the servers replaced, for a lane.
     */
    List<Runnable> checked(Reading reading) {
        List<Runnable> rest = new ArrayList<>();
        if (reading.served() != served) {
            return rest;
        }
        boolean draLost = lost(dra, reading);
        boolean registrationLostNow = lost(registration, reading) || draLost;
        if (draLost) {
            rest.add(rebind(dra));
        }
        if (registrationLostNow) {
            rest.add(rebind(registration));
            if (registration.server != null) {
                registrationLost.run();
            }
        }
        if (draLost || registrationLostNow) {
            served++;
        }
        return rest;
    }

    /** The sockets not served now (a check found them gone and they could not be bound again yet). */
    List<String> missing() {
        List<String> out = new ArrayList<>();
        for (Served s : List.of(dra, registration)) {
            if (s.server == null) {
                out.add(s.path + (s.failure.isEmpty() ? "" : " (" + s.failure + ")"));
            }
        }
        return out;
    }

    /** Ends a server: gracefully (calls in progress may finish for a few seconds) or at once. Outside the context. */
    private static void shutdown(Server server, boolean graceful) {
        if (server == null) {
            return;
        }
        if (graceful) {
            server.shutdown();
        } else {
            server.shutdownNow();
        }
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Stops serving: the rest shuts the servers down and deletes each socket that is still the one bound. */
    Runnable stop() {
        List<Runnable> rest = List.of(detach(registration), detach(dra));
        return () -> rest.forEach(Runnable::run);
    }

    private boolean lost(Served s, Reading reading) {
        Object now = reading.keys().get(s.path);
        if (s.server == null) {
            return true; // not served since a failed bind: try again
        }
        if (now == null || !now.equals(s.key)) {
            LOG.warn("The {} socket {} is {}; serving it again", s.what, s.path, now == null ? "gone"
                    : "another socket now");
            return true;
        }
        return false;
    }

    /** Binds a new server first (its socket renamed over the path), then hands back the old one's shutdown. */
    private Runnable rebind(Served s) {
        Server old = s.server;
        s.server = null;
        try {
            bind(s);
            LOG.info("Serving the {} socket {} again", s.what, s.path);
        } catch (IOException e) {
            // Said once per reason; the next check tries again.
        }
        return () -> shutdown(old, false);
    }

    private void bind(Served s) throws IOException {
        try {
            Files.createDirectories(s.path.getParent());
            s.server = transport.serveReplacing(s.path, s.services);
            s.key = UnixDomainTransport.socketKey(s.path);
            s.failure = "";
        } catch (IOException e) {
            String text = Printable.of(e.getMessage(), 300);
            if (!text.equals(s.failure)) {
                LOG.warn("Cannot serve the {} socket {}: {}; trying again at every check", s.what, s.path, text);
            }
            s.failure = text;
            throw e;
        }
    }

    /**
     * Detaches a socket's server for a stop; the rest (outside the context) lets calls in progress finish for a few
     * seconds, shuts the server down and deletes the socket if it is still the one this process bound.
     */
    private static Runnable detach(Served s) {
        Server server = s.server;
        Object key = s.key;
        Path path = s.path;
        s.server = null;
        s.key = null;
        return () -> {
            shutdown(server, true);
            if (key != null && key.equals(UnixDomainTransport.socketKey(path))) {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    LOG.warn("Cannot remove {}: {}", path, Printable.of(e.toString(), 200));
                }
            }
        };
    }
}
