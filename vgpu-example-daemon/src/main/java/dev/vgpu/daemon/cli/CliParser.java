package dev.vgpu.daemon.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The daemon's command line: {@code vgpu-daemon [-h|-V] COMMAND [OPTION...]}, read against the commands' option tables
 * ({@link CliCommand}). Every option is long; a value follows as {@code --name=VALUE} or as the next argument (which
 * may be empty, and may start with a dash unless it is one of the command's option names); a flag stands alone or says
 * {@code =true}/{@code =false}. Each option at most once; no positional arguments. {@code -h}/{@code --help} and
 * {@code -V}/{@code --version} work on the top level and in every command, and end the parsing where they stand. Any
 * other problem is a {@link UsageError} that names the argument (for an unknown option, with the known names closest
 * to it).
 */
public final class CliParser {

    /** What the command line asks for. */
    public enum Request { RUN, HELP, VERSION }

    /**
     * A parsed command line.
     *
     * @param request what to do
     * @param command the command chosen; null for the top level ({@code --help}, {@code --version} alone)
     * @param args    its options; null for the top level
     */
    public record Parsed(Request request, CliCommand command, CliArgs args) {
    }

    private static final int MAX_SUGGESTIONS = 3;

    private CliParser() {
    }

    /**
     * Reads {@code args} (the subcommand first: {@code VgpuDaemon.withDefaultSubcommand} puts {@code serve} there).
     *
     * @throws UsageError naming what is wrong; its {@link UsageError#command()} is the command whose help goes with
     *                    it, null for the top level
     */
    public static Parsed parse(List<CliCommand> commands, String[] args) {
        if (args.length == 0) {
            throw new UsageError(null, "Missing command: give one of " + names(commands));
        }
        String first = args[0];
        if (CliCommand.isHelp(first)) {
            return new Parsed(Request.HELP, null, null);
        }
        if (CliCommand.isVersion(first)) {
            return new Parsed(Request.VERSION, null, null);
        }
        CliCommand command = null;
        List<String> known = new ArrayList<>();
        for (CliCommand c : commands) {
            known.add(c.name());
            if (c.name().equals(first)) {
                command = c;
            }
        }
        if (command == null) {
            throw new UsageError(null, (first.startsWith("-") ? "Unknown option: '" : "Unknown command: '") + first
                    + "'" + suggestions(first, known));
        }
        return parseCommand(command, args);
    }

    private static Parsed parseCommand(CliCommand command, String[] args) {
        Map<String, String> given = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            String argument = args[i];
            if (CliCommand.isHelp(argument)) {
                return new Parsed(Request.HELP, command, null);
            }
            if (CliCommand.isVersion(argument)) {
                return new Parsed(Request.VERSION, command, null);
            }
            if (!argument.startsWith("-") || argument.equals("-")) {
                throw new UsageError(command, "Unexpected argument: '" + argument + "' (" + command.name()
                        + " takes options only, each starting with --)");
            }
            int equals = argument.indexOf('=');
            String name = equals < 0 ? argument : argument.substring(0, equals);
            CliOption option = command.option(name);
            if (option == null) {
                throw new UsageError(command, "Unknown option: '" + name + "'" + suggestions(name, optionNames(command)));
            }
            if (given.containsKey(name)) {
                throw new UsageError(command, "Option '" + name + "' is given twice: give it once");
            }
            String value;
            if (option.isFlag()) {
                value = equals < 0 ? "true" : flagValue(command, option, argument.substring(equals + 1));
            } else if (equals >= 0) {
                value = argument.substring(equals + 1);
            } else if (i + 1 < args.length && !isOptionName(command, args[i + 1])) {
                value = args[++i];
            } else {
                throw new UsageError(command, "Missing value for option '" + name + "' (" + option.label() + ")");
            }
            given.put(name, option.choices().isEmpty() ? value : choice(command, option, value));
        }
        for (CliOption option : command.options()) {
            if (option.required() && !given.containsKey(option.name())) {
                throw new UsageError(command, "Missing required option: '" + option.synopsis() + "'");
            }
        }
        return new Parsed(Request.RUN, command, new CliArgs(command, given));
    }

    /** Whether the argument names one of the command's options (so it is not taken as the value before it). */
    private static boolean isOptionName(CliCommand command, String argument) {
        if (CliCommand.isBuiltIn(argument)) {
            return true;
        }
        int equals = argument.indexOf('=');
        return argument.startsWith("--") && command.option(equals < 0 ? argument : argument.substring(0, equals)) != null;
    }

    private static String flagValue(CliCommand command, CliOption option, String value) {
        String lower = value.toLowerCase(Locale.ROOT);
        if (lower.equals("true") || lower.equals("false")) {
            return lower;
        }
        throw new UsageError(command, "Invalid value for option '" + option.name() + "': '" + value + "' (it is a flag: give "
                + option.name() + " alone)");
    }

    private static String choice(CliCommand command, CliOption option, String value) {
        for (String allowed : option.choices()) {
            if (allowed.equalsIgnoreCase(value.strip())) {
                return allowed;
            }
        }
        throw new UsageError(command, "Invalid value for option '" + option.name() + "': '" + value + "' (use one of "
                + String.join(", ", option.choices()) + ")");
    }

    private static List<String> optionNames(CliCommand command) {
        List<String> names = new ArrayList<>(List.of("--help", "--version"));
        for (CliOption option : command.options()) {
            names.add(option.name());
        }
        return names;
    }

    private static String names(List<CliCommand> commands) {
        List<String> names = new ArrayList<>();
        for (CliCommand c : commands) {
            names.add(c.name());
        }
        return String.join(", ", names);
    }

    /**
     * "\nPossible solutions: ..." with the known names nearest to {@code typed}, or nothing: a name within a few edits
     * of it (a typo, a letter missing), or one that contains the word typed ({@code --nvml}: {@code --no-nvml},
     * {@code --nvml-library}). At most {@value #MAX_SUGGESTIONS}, nearest first.
     */
    static String suggestions(String typed, List<String> known) {
        String word = stripDashes(typed).toLowerCase(Locale.ROOT);
        if (word.isEmpty()) {
            return "";
        }
        int limit = Math.max(1, word.length() / 4);
        List<String> near = new ArrayList<>();
        List<Integer> distances = new ArrayList<>();
        for (String name : known) {
            String candidate = stripDashes(name).toLowerCase(Locale.ROOT);
            int distance = editDistance(word, candidate);
            boolean contains = word.length() >= 3 && (candidate.contains(word) || word.contains(candidate));
            if (distance <= limit || contains) {
                int at = 0;
                while (at < near.size() && distances.get(at) <= distance) {
                    at++;
                }
                near.add(at, name);
                distances.add(at, distance);
            }
        }
        if (near.isEmpty()) {
            return "";
        }
        return "\nPossible solutions: " + String.join(", ", near.subList(0, Math.min(MAX_SUGGESTIONS, near.size())));
    }

    private static String stripDashes(String name) {
        int start = 0;
        while (start < name.length() && name.charAt(start) == '-') {
            start++;
        }
        return name.substring(start);
    }

    /** Levenshtein distance: insertions, deletions and substitutions of one character. */
    public static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
