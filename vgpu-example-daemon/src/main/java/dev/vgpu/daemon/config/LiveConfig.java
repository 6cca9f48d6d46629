package dev.vgpu.daemon.config;

import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.nvml.XidPolicy;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configuration in force and the file it came from; {@code SIGHUP} asks for the file to be read again.
 *
 * <p>{@code health.xid}: {@code ignored} and {@code recoverAfter} of a reloaded file are in force from the reload on
 * ({@link #xidPolicy()}: the node agent hands a changed policy to NVML and its adapter); {@code enabled} applies at the
 * next start only, since NVML's event registration is made once: a reload that changes it says so in one WARN.
 *
 * <p>Threads: {@link #requestReload()} may be called from any thread; the reload itself runs in
 * {@link #reloadIfRequested()} on the node agent's thread, between rounds, so that a round sees one configuration from
 * its first source to its last. Readers get the current value through one atomic reference.
 */
public final class LiveConfig {

    private static final Logger LOG = LoggerFactory.getLogger(LiveConfig.class);

    private final Optional<Path> file;
    private final String origin;
    private final AtomicReference<ConfigFile> current;
    /** The configuration read at start: its {@code health.xid.enabled} holds for the life of the process. */
    private final ConfigFile atStart;
    private final AtomicBoolean reloadRequested = new AtomicBoolean();

    /**
     * @param file   the file, empty when none is used
     * @param origin how it was given ({@code --config} or {@code VGPU_CONFIG}), for messages
     * @param first  what it said at start
     */
    public LiveConfig(Optional<Path> file, String origin, ConfigFile first) {
        this.file = Objects.requireNonNull(file, "file");
        this.origin = Objects.requireNonNull(origin, "origin");
        this.atStart = Objects.requireNonNull(first, "first");
        this.current = new AtomicReference<>(first);
    }

    /** No file: {@link ConfigFile#NONE} for good. */
    public static LiveConfig none() {
        return new LiveConfig(Optional.empty(), "", ConfigFile.NONE);
    }

    /** What is in force now. */
    ConfigFile current() {
        return current.get();
    }

    /**
     * The XID policy in force: {@code ignored} and {@code recoverAfter} of the file read last, {@code enabled} of the
     * file read at start.
     */
    public XidPolicy xidPolicy() {
        return current.get().xid().withEnabled(atStart.xid().enabled());
    }

    /** The rules in force now (the scanner asks once per round). */
    public DeviceRules rules() {
        return current.get().rules();
    }

    /**
     * A resolver that asks {@code first} (NVML) and then the type-name table in force at the time of asking; the
     * scanner's memo makes that once per card and round.
     */
    public VgpuTypeResolver resolverAfter(VgpuTypeResolver first, Host host) {
        return pf -> current.get().typeNames().after(first, host).supportedTypes(pf);
    }

    /** For the start line: where the configuration comes from and what it changes. */
    public String describe() {
        return file.map(f -> origin + " " + f + " (" + current.get().describe() + ")").orElse("none");
    }

    /** Asks for the file to be read again before the next round; nothing happens without a file. */
    public void requestReload() {
        if (file.isPresent()) {
            reloadRequested.set(true);
        }
    }

    /**
     * Reads the file again if a reload was asked for: a valid file replaces the configuration in force, an invalid
     * one is one WARN and changes nothing. Runs on the rescan thread.
     *
     * @return true when the configuration in force changed
     */
    public boolean reloadIfRequested() {
        if (!reloadRequested.getAndSet(false)) {
            return false;
        }
        Path path = file.orElseThrow();
        ConfigFile next;
        try {
            next = ConfigParser.read(path);
        } catch (ConfigFile.Invalid | RuntimeException e) {
            // Anything the parser did not foresee is refused alike: a reload never fails the round it precedes.
            LOG.warn("SIGHUP: {} {} not applied, the configuration in force stays: {}", origin, path,
                    e instanceof ConfigFile.Invalid ? e.getMessage() : e.toString());
            return false;
        }
        ConfigFile previous = current.getAndSet(next);
        if (next.equals(previous)) {
            LOG.info("SIGHUP: {} {} read again, unchanged", origin, path);
            return false;
        }
        LOG.info("SIGHUP: {} {} applied from this round: {}", origin, path,
                new ConfigFile(next.rules(), next.typeNames(), xidPolicy()).describe());
        if (next.xid().enabled() != atStart.xid().enabled()) {
            LOG.warn("SIGHUP: {} {} sets health.xid.enabled to {}, which applies at the next start (NVML events are"
                    + " registered once): XID health stays {}", origin, path, next.xid().enabled(),
                    atStart.xid().enabled() ? "on" : "off");
        }
        return true;
    }
}
