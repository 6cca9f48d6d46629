package dev.vgpu.daemon.cli;

import java.util.List;

/**
 * One row of a command's option table: what {@link CliParser} accepts and what {@link HelpText} prints. A row without
 * a value label is a boolean flag ({@code --no-nvml}); with one it takes a value, as {@code --name=VALUE} or
 * {@code --name VALUE}. The description may say {@code ${DEFAULT}}, which the help replaces with the default.
 *
 * @param name         the long name, with its two dashes
 * @param label        the value's placeholder in the help ({@code DIR}); null for a boolean flag
 * @param env          the environment variable the option overrides, or null; the command reads it, the table
 *                     documents it (the description names it)
 * @param defaultValue what the command sees when the option is not given, or null for nothing
 * @param required     whether the command refuses to run without it
 * @param choices      the values allowed, matched in any case and handed on as written here; empty = any value
 * @param description  the help text, one paragraph
 */
public record CliOption(String name, String label, String env, String defaultValue, boolean required, List<String> choices,
                 String description) {

    public CliOption {
        if (!name.startsWith("--") || name.length() < 3 || name.contains("=")) {
            throw new IllegalArgumentException("an option's name is --word: " + name);
        }
        if (label == null && (defaultValue != null || required || !choices.isEmpty())) {
            throw new IllegalArgumentException(name + ": a boolean flag has no default, choices or requirement");
        }
        if (defaultValue != null && !description.contains("${DEFAULT}")) {
            throw new IllegalArgumentException(name + ": a default the help does not show (say ${DEFAULT})");
        }
        choices = List.copyOf(choices);
    }

    /** A boolean flag: present or not. */
    public static CliOption flag(String name, String description) {
        return new CliOption(name, null, null, null, false, List.of(), description);
    }

    /** An option that takes one value, shown as {@code name=label} in the help. */
    public static CliOption value(String name, String label, String description) {
        return new CliOption(name, label, null, null, false, List.of(), description);
    }

    public CliOption withDefault(String value) {
        return new CliOption(name, label, env, value, required, choices, description);
    }

    public CliOption withEnv(String variable) {
        return new CliOption(name, label, variable, defaultValue, required, choices, description);
    }

    public CliOption asRequired() {
        return new CliOption(name, label, env, defaultValue, true, choices, description);
    }

    public CliOption withChoices(String... values) {
        return new CliOption(name, label, env, defaultValue, required, List.of(values), description);
    }

    boolean isFlag() {
        return label == null;
    }

    /** {@code --name} or {@code --name=LABEL}, as the help and the messages write it. */
    public String synopsis() {
        return isFlag() ? name : name + "=" + label;
    }

    /** The description with its default filled in. */
    String helpText() {
        return defaultValue == null ? description : description.replace("${DEFAULT}", defaultValue);
    }
}
