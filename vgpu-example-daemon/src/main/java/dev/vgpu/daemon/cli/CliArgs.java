package dev.vgpu.daemon.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;

/**
 * What {@link CliParser} read for one command: the options given, by name, each with its value as typed ({@code ""}
 * for {@code --config=}; {@code "true"} or {@code "false"} for a flag). Readers fall back to the row's default, and
 * convert; a value that does not convert is a {@link UsageError} naming the option.
 */
public final class CliArgs {

    private final CliCommand command;
    private final Map<String, String> given;

    CliArgs(CliCommand command, Map<String, String> given) {
        this.command = command;
        this.given = Map.copyOf(given);
    }

    /** The command these arguments are for. */
    public CliCommand command() {
        return command;
    }

    /** Whether the option was on the command line (a default does not count). */
    public boolean has(CliOption option) {
        return given.containsKey(option.name());
    }

    /**
     * A value and where it came from, for messages: the option's name or its environment variable's.
     *
     * @param value  as given ({@code ""} for {@code --config=})
     * @param origin {@code --state-dir} or {@code VGPU_STATE_DIR}
     */
    public record Given(String value, String origin) {
    }

    /**
     * The option's value from the command line, else from its environment variable ({@link CliOption#env}); null
     * when neither sets it. The flag wins even when empty (an empty flag turns the variable off); defaults do not
     * count.
     */
    public Given given(CliOption option, Map<String, String> env) {
        String value = given.get(option.name());
        if (value != null) {
            return new Given(value, option.name());
        }
        String fromEnv = option.env() == null ? null : env.get(option.env());
        return fromEnv == null ? null : new Given(fromEnv, option.env());
    }

    /** The value given, else the default; null when neither is there. */
    public String text(CliOption option) {
        String value = given.get(option.name());
        return value != null ? value : option.defaultValue();
    }

    /** A flag: given (and not {@code =false}). */
    public boolean flag(CliOption option) {
        return "true".equals(given.get(option.name()));
    }

    /** The value as a path; null when neither given nor defaulted. */
    public Path path(CliOption option) {
        String value = text(option);
        if (value == null) {
            return null;
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new UsageError("Invalid value for option '" + option.name() + "': '" + value + "' is not a path ("
                    + e.getReason() + ")");
        }
    }

    /** The value as an int, given or defaulted (the row must have a default). */
    public int integer(CliOption option) {
        String value = text(option);
        if (value == null) {
            throw new IllegalStateException(option.name() + " has no default");
        }
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new UsageError("Invalid value for option '" + option.name() + "': '" + value
                    + "' is not a whole number");
        }
    }
}
