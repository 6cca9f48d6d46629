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
 * an empty value of either turns the file off. The file is read from the program's own file system. Without either,
 * {@value #INLINE_ENV} may hold the text of a configuration (for pods that can mount no file, such as the GPU
 * Operator's sandbox slot): the same schema and refusals, its field paths prefixed with the variable's name.
 */
public final class ConfigOption {

    /** The environment variable behind {@code --config}. */
    public static final String ENV = "VGPU_CONFIG";
    /** The environment variable holding a configuration's text; {@code --config} and {@value #ENV} win over it. */
    public static final String INLINE_ENV = "VGPU_CONFIG_YAML";

    public static final CliOption CONFIG = CliOption.value("--config", "FILE", "YAML configuration (version: v1): resource"
            + " renames, exclusions, vGPU type names, XID health; see the README. Overrides " + ENV + " and "
            + INLINE_ENV + " (the configuration's text); empty = none.").withEnv(ENV);
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
            return inline(env.get(INLINE_ENV));
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

    /**
     * The configuration {@value #INLINE_ENV} holds; none when it is unset or blank.
     *
     * @throws Refusal naming the variable and the field at fault
     */
    public static LiveConfig inline(String text) {
        if (text == null || text.isBlank()) {
            return LiveConfig.none();
        }
        try {
            return LiveConfig.inline(INLINE_ENV, ConfigParser.parseText(text));
        } catch (ConfigFile.Invalid e) {
            throw new Refusal(INLINE_ENV + ": " + e.getMessage());
        }
    }
}
