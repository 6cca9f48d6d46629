package dev.vgpu.daemon.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A subcommand's table: its name, its description (the first line is its summary in the top-level help) and its
 * options. {@code -h/--help} and {@code -V/--version} belong to every command and are not in the table.
 *
 * @param name        what the user types ({@code discover})
 * @param description paragraphs of the help, the first one short
 * @param options     the option rows, in any order (the help sorts them)
 */
public record CliCommand(String name, List<String> description, List<CliOption> options) {

    public CliCommand {
        description = List.copyOf(description);
        options = List.copyOf(options);
        List<String> seen = new ArrayList<>();
        for (CliOption option : options) {
            if (isBuiltIn(option.name())) {
                throw new IllegalArgumentException(name + ": " + option.name() + " belongs to every command already");
            }
            if (seen.contains(option.name())) {
                throw new IllegalArgumentException(name + ": option " + option.name() + " is declared twice");
            }
            seen.add(option.name());
        }
    }

    /** The options every command has, which no table may declare again. */
    public static boolean isBuiltIn(String argument) {
        return isHelp(argument) || isVersion(argument);
    }

    static boolean isHelp(String argument) {
        return argument.equals("-h") || argument.equals("--help");
    }

    static boolean isVersion(String argument) {
        return argument.equals("-V") || argument.equals("--version");
    }

    /** Option groups that several commands share ({@code ScanOptions.OPTIONS}, ...) and a command's own rows, as one table. */
    @SafeVarargs
    public static List<CliOption> join(List<CliOption>... groups) {
        List<CliOption> all = new ArrayList<>();
        for (List<CliOption> group : groups) {
            all.addAll(group);
        }
        return all;
    }

    /** The row named {@code name} (dashes included), or null. */
    CliOption option(String name) {
        for (CliOption option : options) {
            if (option.name().equals(name)) {
                return option;
            }
        }
        return null;
    }
}
