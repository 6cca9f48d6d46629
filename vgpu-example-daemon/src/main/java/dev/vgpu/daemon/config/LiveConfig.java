package dev.vgpu.daemon.config;

import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.nvml.XidPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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

    /**
     * A configuration given as text by {@code origin} (an environment variable), for good: a process's environment
     * does not change, so SIGHUP has nothing to read again.
     */
    public static LiveConfig inline(String origin, ConfigFile configuration) {
        return new LiveConfig(Optional.empty(), origin, configuration);
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

    /**
     * What a reload changed, in words: each part of the configuration that differs, before and after; for a SIGHUP's
     * log line. {@code enabled} of {@code health.xid} is left out: it applies at the next start (its own WARN).
     */
    String changes(ConfigFile before, ConfigFile after) {
        List<String> parts = new ArrayList<>();
        if (!before.rules().renames().equals(after.rules().renames())) {
            parts.add("rename rules changed, " + before.rules().renames().size() + " -> "
                    + after.rules().renames().size());
        }
        if (!before.rules().exclusions().equals(after.rules().exclusions())) {
            parts.add("exclusions changed, " + before.rules().exclusions().size() + " -> "
                    + after.rules().exclusions().size());
        }
        if (!before.typeNames().equals(after.typeNames())) {
            parts.add("vGPU type names changed, for " + before.typeNames().names().size() + " -> "
                    + after.typeNames().names().size() + " device ids");
        }
        XidPolicy was = before.xid().withEnabled(atStart.xid().enabled());
        XidPolicy now = after.xid().withEnabled(atStart.xid().enabled());
        if (!was.equals(now)) {
            parts.add("health.xid: " + was + " -> " + now);
        }
        return parts.isEmpty() ? "nothing that applies before the next start changed" : String.join("; ", parts);
    }

    /**
     * For the start line without NVML ({@code --no-nvml}): as {@link #describe()}, but XID health, which needs NVML,
     * is said to be off whatever the configuration asks.
     */
    public String describeWithoutNvml() {
        if (file.isEmpty() && origin.isEmpty()) {
            return "none";
        }
        ConfigFile now = current.get();
        String what = new ConfigFile(now.rules(), now.typeNames(), now.xid().withEnabled(false)).describe();
        return file.map(f -> origin + " " + f).orElse(origin) + " (" + what + " without NVML)";
    }

    /** For the start line: where the configuration comes from and what it changes. */
    public String describe() {
        return file.map(f -> origin + " " + f + " (" + current.get().describe() + ")")
                .orElse(origin.isEmpty() ? "none" : origin + " (" + current.get().describe() + ")");
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
        LOG.info("SIGHUP: {} {} applied from this round: {}", origin, path, changes(previous, next));
        if (next.xid().enabled() != atStart.xid().enabled()) {
            LOG.warn("SIGHUP: {} {} sets health.xid.enabled to {}, which applies at the next start (NVML events are"
                    + " registered once): XID health stays {}", origin, path, next.xid().enabled(),
                    atStart.xid().enabled() ? "on" : "off");
        }
        return true;
    }
}
