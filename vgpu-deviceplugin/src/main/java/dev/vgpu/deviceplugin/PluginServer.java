package dev.vgpu.deviceplugin;

import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import io.grpc.BindableService;
import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One plugin's gRPC server on its socket: binding it, telling whether the socket file there is still the one it
 * bound, and shutting it down. A shutdown blocks, so {@link #detach} hands it back as a task for outside the context;
 * shutdowns run one after the other (each waits for the one before), so a stop never overlaps a restart's shutdown,
 * and a socket is deleted only while it is still the file this server bound. {@link ResourcePlugin} decides when.
 *
 * <p>Threads: owned by the manager's serial context, where every method runs; the tasks {@link #detach} and
 * {@link #lastShutdown} return run outside it and touch only what they captured.
 */
final class PluginServer {

    private static final Logger LOG = LoggerFactory.getLogger(PluginServer.class);

    private final ResourceName name;
    /** Empty when the device-plugin directory's path is too long for any socket name: then nothing is served. */
    private final Optional<Path> socket;
    private final Path pluginDir;
    private final UnixDomainTransport transport;

    private Server server;
    /** The file key (device and inode) of the socket this server bound; null while not serving. */
    private Object boundSocket;
    /** How many times a server was bound, so a check read before a re-serve is not judged against the new one. */
    private int served;
    /** The last shutdown (done, or running outside the context). */
    private CompletableFuture<Void> shutdown = CompletableFuture.completedFuture(null);
    private String serveFailure = "";

    PluginServer(ResourceName name, Optional<Path> socket, Path pluginDir, UnixDomainTransport transport) {
        this.name = name;
        this.socket = socket;
        this.pluginDir = pluginDir;
        this.transport = transport;
    }

    /**
     * Binds a server for {@code service} on the socket (creating the directory first). A failure is logged once for
     * as long as its message stays the same; checks call this again.
     *
     * @return whether the server is up now
     */
    boolean serve(BindableService service) {
        if (socket.isEmpty()) {
            return false; // the plugin said why once at start
        }
        try {
            PluginDirectory.create(pluginDir);
            server = transport.serve(socket.get(), List.of(service));
            boundSocket = UnixDomainTransport.socketKey(socket.get());
            served++;
            serveFailure = "";
            LOG.debug("Serving {} on {}", name, socket.get());
            return true;
        } catch (IOException e) {
            server = null;
            if (!e.getMessage().equals(serveFailure)) {
                LOG.warn("Cannot serve {} on {}: {}; retrying at every check", name, socket.get(), e.getMessage());
            }
            serveFailure = e.getMessage();
            return false;
        }
    }

    /** Whether a server is up (bound and not detached). */
    boolean serving() {
        return server != null;
    }

    /** How many servers were bound so far; a check records it with what it reads. */
    int served() {
        return served;
    }

    /**
     * Whether a check that read the socket's file key {@code keyNow} (null: no socket there) while the serve count was
     * {@code servedThen} shows this server's socket deleted or replaced by another file. A read taken before the
     * latest bind says nothing about it.
     */
    boolean replaced(int servedThen, Object keyNow) {
        return server != null && servedThen == served && (keyNow == null || !keyNow.equals(boundSocket));
    }

    /**
     * Detaches the server; what blocks is left to the caller.
     *
     * @param graceful let calls finish for up to a second (a stop) or cut them at once (a restart)
     * @return the rest, for outside the context: wait for the shutdown before this one, shut this server down, then
     *         delete its socket unless another server bound that path meanwhile
     */
    Runnable detach(boolean graceful) {
        Server detached = server;
        Object key = boundSocket;
        server = null;
        boundSocket = null;
        CompletableFuture<Void> before = shutdown;
        CompletableFuture<Void> done = new CompletableFuture<>();
        shutdown = done;
        return () -> {
            try {
                before.join();
                if (detached != null) {
                    shutdownServer(detached, graceful);
                    deleteSocketIf(key);
                }
            } finally {
                done.complete(null);
            }
        };
    }

    /** A task that waits, outside the context, for the last shutdown to be done. */
    Runnable lastShutdown() {
        CompletableFuture<Void> last = shutdown;
        return last::join;
    }

    /** Ends a server; blocks for a few seconds at most. Outside the context. */
    private static void shutdownServer(Server detached, boolean graceful) {
        try {
            if (graceful) {
                detached.shutdown();
                if (!detached.awaitTermination(1, TimeUnit.SECONDS)) {
                    detached.shutdownNow();
                }
            } else {
                detached.shutdownNow();
            }
            detached.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            detached.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Deletes the socket file when it is still the one with {@code key}. Outside the context. */
    private void deleteSocketIf(Object key) {
        Object now = UnixDomainTransport.socketKey(socket.get());
        if (now == null || !now.equals(key)) {
            return; // gone already, or another server's (a plugin for the same resource started since)
        }
        try {
            Files.deleteIfExists(socket.get());
        } catch (IOException e) {
            LOG.warn("Cannot delete socket {} of {}: {}", socket.get(), name, e.getMessage());
        }
    }
}
