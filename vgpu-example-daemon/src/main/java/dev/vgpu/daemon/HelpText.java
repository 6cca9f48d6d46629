package dev.vgpu.daemon;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.IHelpSectionRenderer;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * Usage help that wraps only at spaces. Picocli's own wrapping also breaks after a dot, which split file names
 * such as {@code libnvidia-ml.so.1} across lines; here each section is laid out unwrapped and then wrapped at
 * word boundaries, continuation lines indented under their column. A word longer than a line stays whole.
 */
final class HelpText {

    /** Columns the help is wrapped to. */
    static final int WIDTH = 80;
    private static final int UNWRAPPED = 10_000;

    private HelpText() {
    }

    /** Installs the wrapping renderers on a command and all its subcommands. */
    static void install(CommandLine cli) {
        Map<String, IHelpSectionRenderer> sections = cli.getHelpSectionMap();
        for (String key : List.of(UsageMessageSpec.SECTION_KEY_DESCRIPTION, UsageMessageSpec.SECTION_KEY_OPTION_LIST,
                UsageMessageSpec.SECTION_KEY_COMMAND_LIST, UsageMessageSpec.SECTION_KEY_FOOTER)) {
            IHelpSectionRenderer original = sections.get(key);
            if (original != null) {
                sections.put(key, help -> wrap(unwrapped(original, help), WIDTH));
            }
        }
        cli.setHelpSectionMap(sections);
        cli.getSubcommands().values().forEach(HelpText::install);
    }

    private static String unwrapped(IHelpSectionRenderer renderer, Help help) {
        UsageMessageSpec usage = help.commandSpec().usageMessage();
        int width = usage.width();
        usage.width(UNWRAPPED);
        try {
            return renderer.render(new Help(help.commandSpec(), help.colorScheme()));
        } finally {
            usage.width(width);
        }
    }

    /**
     * Wraps each line at spaces. In an indented table row ({@code "  --name=X   text"}) the text after the first
     * wide gap is wrapped and continued two columns right of where it starts, as picocli does; a line that is
     * only indented text continues two columns right of its indentation; an unindented paragraph at column 0.
     */
    static String wrap(String text, int width) {
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
