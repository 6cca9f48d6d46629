package dev.vgpu.kubelet.api.transport;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches directories (the device-plugin directory and {@code /dev/vfio} under the host root; the DRA plugin's
 * {@code plugins_registry} and its own directory) and runs a callback with the directory that changed, so checks
 * react at once instead of at the next poll. Events only trigger a check; the check reads the truth from the file
 * system, so lost or coalesced events do no harm. Shared by both adapters; not a stable API.
 *
 * <p>Threads: one thread of its own (named by the caller, e.g. {@code vgpu-dp-watch}) blocks in
 * {@link WatchService#take()} and runs the callback, which must only post. {@code keys} is owned by the adapter's
 * check lane: only {@link #start()} (before the lane runs) and the lane's rounds call {@link #ensureWatching()}.
 * {@link #close()} ends the thread.
 */
public final class DirectoryWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryWatch.class);

    private final List<Path> directories;
    private final Consumer<Path> onChange;
    private final Consumer<Throwable> failed;
    private final WatchService service;
    private final Thread thread;
    private final Map<Path, WatchKey> keys = new HashMap<>();

    /**
     * {@code threads} makes the watch thread (new, unstarted), which is then named {@code threadName} and made a
     * daemon thread; whatever the callback throws goes to {@code failed} (which may rethrow a JVM error).
     */
    public DirectoryWatch(List<Path> directories, Consumer<Path> onChange, ThreadFactory threads, String threadName,
                          Consumer<Throwable> failed) throws IOException {
        // The watch service belongs to the default file system; a directory elsewhere (a host root on jimfs)
        // cannot be registered with it, so only the periodic check sees its changes.
        this.directories = directories.stream().filter(d -> d.getFileSystem() == FileSystems.getDefault()).toList();
        directories.stream().filter(d -> d.getFileSystem() != FileSystems.getDefault()).forEach(d ->
                LOG.info("Not watching {}: it is not on the default file system; the periodic check covers it", d));
        this.onChange = onChange;
        this.failed = failed;
        this.service = FileSystems.getDefault().newWatchService();
        this.thread = Objects.requireNonNull(threads.newThread(this::run), "the thread factory made no thread");
        this.thread.setName(threadName);
        this.thread.setDaemon(true);
    }

    /** Starts the watch thread after registering what exists now. */
    public DirectoryWatch start() {
        ensureWatching();
        thread.start();
        return this;
    }

    /** Registers every directory that exists and is not watched yet (a directory may appear later). */
    public void ensureWatching() {
        for (Path dir : directories) {
            WatchKey key = keys.get(dir);
            if (key != null && key.isValid()) {
                continue;
            }
            try {
                keys.put(dir, dir.register(service, StandardWatchEventKinds.ENTRY_CREATE,
                        StandardWatchEventKinds.ENTRY_DELETE));
                LOG.debug("Watching {}", dir);
            } catch (IOException | ClosedWatchServiceException e) {
                keys.remove(dir);
            }
        }
    }

    private void run() {
        while (true) {
            WatchKey key;
            try {
                key = service.take();
            } catch (ClosedWatchServiceException e) {
                return;
            } catch (InterruptedException e) {
                return;
            }
            key.pollEvents();
            key.reset();
            try {
                onChange.accept((Path) key.watchable());
            } catch (Throwable e) {
                failed.accept(e);
            }
        }
    }

    /** Stops watching and ends the thread. */
    @Override
    public void close() {
        try {
            service.close();
        } catch (IOException e) {
            LOG.debug("Closing the watch service: {}", e.toString());
        }
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
