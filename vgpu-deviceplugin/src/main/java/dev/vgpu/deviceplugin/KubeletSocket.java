package dev.vgpu.deviceplugin;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one memory of the kubelet's registration socket: which {@code kubelet.sock} this manager knows, numbered by
 * generation. A restarted kubelet makes a new socket file (a new inode or time); the first look that finds one
 * replacing a known socket is the kubelet restart, logged and reported once. Registrations remember only the
 * generation they reached (docs/ARCHITECTURE.md, "Where a kubelet restart happens"). A socket that disappears is one
 * WARN, and its return one INFO, however many looks fall in between.
 *
 * <p>Threads: owned by the manager's context; {@link #read} is a plain stat that any thread may run, and
 * {@link #present()} (what the last look found, published through one {@code volatile}) any thread may ask.
 */
final class KubeletSocket {

    private static final Logger LOG = LoggerFactory.getLogger(KubeletSocket.class);

    /** No {@code kubelet.sock} there now (a generation number no socket has). */
    static final int NONE = 0;

    /**
     * What identifies one socket file.
     *
     * @param fileKey  the file system's key (device and inode on Linux), may be null
     * @param modified the last-modified time of the socket file
     */
    record Identity(Object fileKey, FileTime modified) {
    }

    private final Path path;
    private final PluginObserver observer;
    private Optional<Identity> known = Optional.empty();
    private int generation = NONE;
    /** Looks taken note of, to tell a read made outside the context that a newer look overtook it. */
    private long looks;
    /** True from a look that found the known socket gone until one finds a socket again (one WARN, one INFO). */
    private boolean gone;
    /** What the last look found; written by the context only, read by any thread (readiness). */
    private volatile boolean present;

    KubeletSocket(Path path, PluginObserver observer) {
        this.path = path;
        this.observer = observer;
    }

    /** {@code <device-plugin-dir>/kubelet.sock}. */
    Path path() {
        return path;
    }

    /** The identity of the socket at {@code path} now, empty when there is none; any thread. */
    static Optional<Identity> read(Path path) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
            return Optional.of(new Identity(attributes.fileKey(), attributes.lastModifiedTime()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Whether the last look found a socket; false before the first look. Any thread. */
    boolean present() {
        return present;
    }

    /** Reads the socket now and takes note of it (see {@link #seen}). */
    int look() {
        return seen(read(path));
    }

    /**
     * How many looks this memory has taken note of; in the context. A read made outside the context remembers the
     * count from before it began and passes it to {@link #seenSince}.
     */
    long looks() {
        return looks;
    }

    /**
     * Takes note of a read made outside the context that began when {@link #looks()} was {@code looksBefore}. When
     * another look was taken meanwhile, the read may be older than what this memory knows (under load a check's read
     * can span two kubelet restarts, and the socket it read is then an old one, not a new one): it is ignored, and the
     * generation known now is answered.
     */
    int seenSince(Optional<Identity> now, long looksBefore) {
        if (looks != looksBefore) {
            return generation;
        }
        return seen(now);
    }

    /**
     * Takes note of what a look found: the generation of the socket there, {@link #NONE} when there is none. A
     * socket other than the known one starts the next generation; when one was known, the kubelet restarted.
     */
    int seen(Optional<Identity> now) {
        looks++;
        present = now.isPresent();
        if (now.isEmpty()) {
            if (known.isPresent() && !gone) {
                gone = true;
                LOG.warn("The kubelet's socket {} is gone: the kubelet is down or restarting; the resources stay"
                        + " served and register again once it is back", path);
            }
            return NONE;
        }
        if (gone) {
            gone = false;
            LOG.info("The kubelet's socket {} is back", path);
        }
        if (!now.equals(known)) {
            if (known.isPresent()) {
                LOG.info("The kubelet restarted: {} is new", path);
                observer.kubeletRestarted();
            }
            known = now;
            generation++;
        }
        return generation;
    }
}
