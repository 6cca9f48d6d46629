package dev.vgpu.daemon;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * What to scan ({@code serve} and {@code discover}): the host root, which sources, and the state directory where
 * sources keep what they learned across restarts.
 */
final class ScanOptions {

    /** The environment variable behind {@code --sources}. */
    static final String SOURCES_ENV = "VGPU_SOURCES";
    /** The environment variable behind {@code --state-dir}. */
    static final String STATE_ENV = "VGPU_STATE_DIR";

    @Option(names = "--host-root", paramLabel = "DIR", defaultValue = "/",
            description = "Directory standing for the host's /: every sysfs and /dev path is read under it "
                    + "(default: ${DEFAULT-VALUE}).")
    Path hostRoot;

    @Option(names = "--sources", paramLabel = "NAME,...",
            description = "Scan only these device sources (passthrough, mdev, vendor-vfio, or a custom source's "
                    + "name); overrides " + SOURCES_ENV + ". Default: every source on the class path.")
    String sources;

    @Option(names = "--state-dir", paramLabel = "DIR",
            description = "Keep what the sources learn (the profile names of vendor-VFIO cards) in this directory, so "
                    + "that a card that filled up is still named after a restart without NVML; never inside the "
                    + "device-plugin directory. serve creates and writes it, discover only reads it. Overrides "
                    + STATE_ENV + "; empty = off (the default).")
    String stateDir;

    /** A state directory and where it was given, for messages ({@code --state-dir} or the variable). */
    record StateDir(Path path, String origin) {
    }

    /**
     * The state directory from {@code --state-dir}, else {@value #STATE_ENV}; empty when neither gives one or the
     * value is blank.
     *
     * @throws Refusal when the value is not a path
     */
    Optional<StateDir> resolveStateDir(CommandSpec spec, Map<String, String> env) {
        String origin = stateDir != null ? "--state-dir" : STATE_ENV;
        String value = stateDir != null ? stateDir : env.get(STATE_ENV);
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new StateDir(Path.of(value.strip()), origin));
        } catch (java.nio.file.InvalidPathException e) {
            throw new Refusal(spec.commandLine(), "invalid " + origin + " value: " + e.getMessage());
        }
    }

    /**
     * The sources named by {@code --sources} or {@value #SOURCES_ENV}; every source when neither names any.
     *
     * @throws Refusal naming the first unknown source and those that exist
     */
    List<DeviceSource> resolveSources(CommandSpec spec, Map<String, String> env) {
        String origin = sources != null ? "--sources" : SOURCES_ENV;
        String value = sources != null ? sources : env.get(SOURCES_ENV);
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
                throw new Refusal(spec.commandLine(), "unknown source \"" + name + "\" in " + origin
                        + " (sources on the class path: " + String.join(", ", known) + ")");
            }
        }
        return DeviceSources.select(all, Optional.of(wanted));
    }
}
