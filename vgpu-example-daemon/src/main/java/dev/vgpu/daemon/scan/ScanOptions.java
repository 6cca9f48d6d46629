package dev.vgpu.daemon.scan;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What to scan ({@code serve} and {@code discover}): the host root, which sources, and the state directory where
 * sources keep what they learned across restarts.
 */
public final class ScanOptions {

    /** The environment variable behind {@code --sources}. */
    public static final String SOURCES_ENV = "VGPU_SOURCES";
    /** The environment variable behind {@code --state-dir}. */
    public static final String STATE_ENV = "VGPU_STATE_DIR";

    public static final CliOption HOST_ROOT = CliOption.value("--host-root", "DIR", "Directory standing for the host's /:"
            + " every sysfs and /dev path is read under it (default: ${DEFAULT}).").withDefault("/");
    public static final CliOption SOURCES = CliOption.value("--sources", "NAME,...", "Scan only these device sources"
            + " (passthrough, mdev, vendor-vfio, or a custom source's name); overrides " + SOURCES_ENV + ". Default:"
            + " every source on the class path.").withEnv(SOURCES_ENV);
    public static final CliOption STATE_DIR = CliOption.value("--state-dir", "DIR", "Keep what the sources learn (the profile"
            + " names of vendor-VFIO cards) in this directory, so that a card that filled up is still named after a"
            + " restart without NVML; never inside the device-plugin directory. serve creates and writes it, discover"
            + " only reads it. Overrides " + STATE_ENV + "; empty = off (the default).").withEnv(STATE_ENV);
    /** The rows {@code serve} and {@code discover} share. */
    public static final List<CliOption> OPTIONS = List.of(HOST_ROOT, SOURCES, STATE_DIR);

    public final Path hostRoot;
    private final CliArgs args;

    public ScanOptions(CliArgs args) {
        this.args = args;
        hostRoot = args.path(HOST_ROOT);
    }

    /** A state directory and where it was given, for messages ({@code --state-dir} or the variable). */
    public record StateDir(Path path, String origin) {
    }

    /**
     * The state directory from {@code --state-dir}, else {@value #STATE_ENV}; empty when neither gives one or the
     * value is blank.
     *
     * @throws Refusal when the value is not a path
     */
    public Optional<StateDir> resolveStateDir(Map<String, String> env) {
        CliArgs.Given given = args.given(STATE_DIR, env);
        if (given == null || given.value().isBlank()) {
            return Optional.empty();
        }
        String origin = given.origin();
        String value = given.value();
        try {
            return Optional.of(new StateDir(Path.of(value.strip()), origin));
        } catch (java.nio.file.InvalidPathException e) {
            throw new Refusal("invalid " + origin + " value: " + e.getMessage());
        }
    }

    /**
     * The sources named by {@code --sources} or {@value #SOURCES_ENV}; every source when neither names any.
     *
     * @throws Refusal naming the first unknown source and those that exist
     */
    public List<DeviceSource> resolveSources(Map<String, String> env) {
        CliArgs.Given given = args.given(SOURCES, env);
        String origin = given == null ? SOURCES_ENV : given.origin();
        String value = given == null ? null : given.value();
        List<DeviceSource> all = DeviceSources.load();
        Set<String> wanted = new LinkedHashSet<>();
        if (value != null) {
            Arrays.stream(value.split(",")).map(String::strip).filter(s -> !s.isEmpty()).forEach(wanted::add);
        }
        if (wanted.isEmpty()) {
            return all;
        }
        Set<String> known = new TreeSet<>();
        all.forEach(s -> known.add(s.name()));
        for (String name : wanted) {
            if (!known.contains(name)) {
                throw new Refusal("unknown source \"" + name + "\" in " + origin
                        + " (sources on the class path: " + String.join(", ", known) + ")");
            }
        }
        return DeviceSources.select(all, Optional.of(wanted));
    }
}
