package dev.vgpu.daemon.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The usage help, laid out from the commands' option tables ({@link CliCommand}): a synopsis whose continuation lines
 * stand under its first option, the description, one row per option (sorted by name; a name too long for its column
 * puts its text on the next line) and, on the top level, the commands. Everything wraps only at spaces, so file names
 * such as {@code libnvidia-ml.so.1} stay whole; continuation lines are indented under their column. A word longer
 * than a line stays whole.
 */
public final class HelpText {

    /** Columns the help is wrapped to. */
    public static final int WIDTH = 80;
    /** The program's name in the synopsis. */
    static final String PROGRAM = "vgpu-daemon";
    /** Option names up to this long keep their text on the same row. */
    private static final int NAME_COLUMN_MAX = 24;
    private static final String HELP_TEXT = "Show this help message and exit.";
    private static final String VERSION_TEXT = "Print version information and exit.";

    private HelpText() {
    }

    /** The help of one command. */
    public static String of(CliCommand command) {
        List<String> synopsis = new ArrayList<>(List.of("[-h|-V]"));
        List<CliOption> sorted = sorted(command.options());
        for (CliOption option : sorted) {
            if (option.isFlag()) {
                synopsis.add("[" + option.synopsis() + "]");
            }
        }
        for (CliOption option : sorted) {
            if (!option.isFlag()) {
                synopsis.add(option.required() ? option.synopsis() : "[" + option.synopsis() + "]");
            }
        }
        StringBuilder help = new StringBuilder(synopsis("Usage: " + PROGRAM + " " + command.name() + " ", synopsis));
        for (String paragraph : command.description()) {
            help.append(wrap(paragraph, WIDTH)).append('\n');
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"help", "  -h, --help", HELP_TEXT});
        rows.add(new String[] {"version", "  -V, --version", VERSION_TEXT});
        for (CliOption option : sorted) {
            rows.add(new String[] {key(option), "      " + option.synopsis(), option.helpText()});
        }
        rows.sort((a, b) -> a[0].compareTo(b[0]));
        help.append(table(rows));
        return help.toString();
    }

    /**
     * What follows a usage error: the synopsis of {@code command} (or, for null, the top level's with the names of
     * {@code commands}) and where the whole help is, instead of the whole help, so that the message stays the line
     * one reads.
     */
    public static String shortUsage(CliCommand command, List<CliCommand> commands) {
        String program = PROGRAM + (command == null ? "" : " " + command.name());
        return command == null
                ? "Usage: " + program + " [-h|-V] [COMMAND]\nCommands: " + String.join(", ",
                        commands.stream().map(CliCommand::name).toList()) + "\nRun '" + program
                        + " --help' for more.\n"
                : "Usage: " + program + " [-h|-V] [OPTION...]\nRun '" + program + " --help' for the options.\n";
    }

    /** The top-level help: the commands with their summaries, and a footer. */
    public static String topLevel(String description, List<CliCommand> commands, String footer) {
        StringBuilder help = new StringBuilder(synopsis("Usage: " + PROGRAM + " ", List.of("[-h|-V]", "[COMMAND]")));
        help.append(wrap(description, WIDTH)).append('\n');
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"help", "  -h, --help", HELP_TEXT});
        rows.add(new String[] {"version", "  -V, --version", VERSION_TEXT});
        help.append(table(rows)).append("Commands:\n");
        int width = 0;
        for (CliCommand command : commands) {
            width = Math.max(width, command.name().length());
        }
        for (CliCommand command : commands) {
            String row = "  " + command.name() + " ".repeat(width - command.name().length() + 2)
                    + command.description().get(0);
            help.append(wrap(row, WIDTH)).append('\n');
        }
        help.append('\n').append(wrap(footer, WIDTH)).append('\n');
        return help.toString();
    }

    private static List<CliOption> sorted(List<CliOption> options) {
        List<CliOption> sorted = new ArrayList<>(options);
        sorted.sort((a, b) -> key(a).compareTo(key(b)));
        return sorted;
    }

    private static String key(CliOption option) {
        return option.name().substring(2).toLowerCase(Locale.ROOT);
    }

    /** The words after {@code lead}, wrapped; continuation lines start under the first word. */
    private static String synopsis(String lead, List<String> words) {
        StringBuilder out = new StringBuilder();
        StringBuilder line = new StringBuilder(lead);
        String indent = " ".repeat(lead.length());
        boolean empty = true;
        for (String word : words) {
            if (!empty && line.length() + 1 + word.length() > WIDTH) {
                out.append(line).append('\n');
                line = new StringBuilder(indent);
                empty = true;
            }
            if (!empty) {
                line.append(' ');
            }
            line.append(word);
            empty = false;
        }
        return out.append(line).append('\n').toString();
    }

    /** Rows of {key, name, text}: the text in a column right of the widest name that fits. */
    private static String table(List<String[]> rows) {
        int column = 0;
        for (String[] row : rows) {
            if (row[1].length() <= NAME_COLUMN_MAX) {
                column = Math.max(column, row[1].length());
            }
        }
        column += 3;
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            String name = row[1];
            if (name.length() + 2 > column) {
                out.append(name).append('\n').append(wrap(" ".repeat(column) + row[2], WIDTH)).append('\n');
            } else {
                out.append(wrap(name + " ".repeat(column - name.length()) + row[2], WIDTH)).append('\n');
            }
        }
        return out.toString();
    }

    /**
     * Wraps each line at spaces. In an indented table row ({@code "  --name=X   text"}) the text after the first
     * wide gap is wrapped and continued two columns right of where it starts; a line that is only indented text
     * continues two columns right of its indentation; an unindented paragraph at column 0.
     */
    public static String wrap(String text, int width) {
        List<String> out = new ArrayList<>();
        for (String line : text.split("\n", -1)) {
            if (line.length() <= width) {
                out.add(line);
            } else {
                out.addAll(wrapLine(line, width));
            }
        }
        return String.join("\n", out);
    }

    private static List<String> wrapLine(String line, int width) {
        int lead = 0;
        while (lead < line.length() && line.charAt(lead) == ' ') {
            lead++;
        }
        int textStart = lead;
        int gap = line.indexOf("  ", lead);
        if (lead > 0 && gap > lead) {
            textStart = gap;
            while (textStart < line.length() && line.charAt(textStart) == ' ') {
                textStart++;
            }
        }
        String indent = lead > 0 ? " ".repeat(textStart + 2) : "";
        List<String> lines = new ArrayList<>();
        StringBuilder current = new StringBuilder(line.substring(0, textStart));
        boolean empty = true;
        for (String word : line.substring(textStart).split(" +")) {
            if (!empty && current.length() + 1 + word.length() > width) {
                lines.add(current.toString());
                current = new StringBuilder(indent);
                empty = true;
            }
            if (!empty) {
                current.append(' ');
            }
            current.append(word);
            empty = false;
        }
        lines.add(current.toString());
        return lines;
    }
}
