package dev.vgpu.daemon;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code --config FILE} (env {@value #ENV}) for {@code serve} and {@code discover}: the flag wins over the variable;
 * an empty value of either turns the file off. The file is read from the program's own file system.
 */
final class ConfigOption {

    /** The environment variable behind {@code --config}. */
    static final String ENV = "VGPU_CONFIG";

    @Option(names = "--config", paramLabel = "FILE",
            description = "YAML configuration (version: v1): resource renames, exclusions, vGPU type names, XID health;"
                    + " see the README. Overrides " + ENV + "; empty = none. SIGHUP re-reads it.")
    String config;

    /**
     * The file in force and its configuration, read now.
     *
     * @throws Refusal naming the flag or variable, the file, and the field at fault
     */
    LiveConfig load(CommandSpec spec, Map<String, String> env) {
        String origin = config != null ? "--config" : ENV;
        String value = config != null ? config : env.get(ENV);
        if (value == null || value.isBlank()) {
            return LiveConfig.none();
        }
        Path file;
        try {
            file = Path.of(value.strip());
        } catch (java.nio.file.InvalidPathException e) {
            throw new Refusal(spec.commandLine(), "invalid " + origin + " value: " + e.getMessage());
        }
        try {
            return new LiveConfig(Optional.of(file), origin, ConfigFile.read(file));
        } catch (ConfigFile.Invalid e) {
            throw new Refusal(spec.commandLine(), origin + " " + file + ": " + e.getMessage());
        }
    }
}
