package dev.vgpu.daemon.scan;

import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.config.ConfigFile;
import dev.vgpu.daemon.config.ConfigParser;
import dev.vgpu.daemon.config.LiveConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code --config FILE} (env {@value #ENV}) for {@code serve} and {@code discover}: the flag wins over the variable;
 * an empty value of either turns the file off. The file is read from the program's own file system.
 */
public final class ConfigOption {

    /** The environment variable behind {@code --config}. */
    public static final String ENV = "VGPU_CONFIG";

    public static final CliOption CONFIG = CliOption.value("--config", "FILE", "YAML configuration (version: v1): resource"
            + " renames, exclusions, vGPU type names, XID health; see the README. Overrides " + ENV + "; empty = none."
            + " SIGHUP re-reads it.").withEnv(ENV);
    /** The row of {@code serve} and {@code discover}. */
    public static final List<CliOption> OPTIONS = List.of(CONFIG);

    private final CliArgs args;

    public ConfigOption(CliArgs args) {
        this.args = args;
    }

    /**
     * The file in force and its configuration, read now.
     *
     * @throws Refusal naming the flag or variable, the file, and the field at fault
     */
    public LiveConfig load(Map<String, String> env) {
        CliArgs.Given given = args.given(CONFIG, env);
        if (given == null || given.value().isBlank()) {
            return LiveConfig.none();
        }
        String origin = given.origin();
        String value = given.value();
        Path file;
        try {
            file = Path.of(value.strip());
        } catch (java.nio.file.InvalidPathException e) {
            throw new Refusal("invalid " + origin + " value: " + e.getMessage());
        }
        try {
            return new LiveConfig(Optional.of(file), origin, ConfigParser.read(file));
        } catch (ConfigFile.Invalid e) {
            throw new Refusal(origin + " " + file + ": " + e.getMessage());
        }
    }
}
