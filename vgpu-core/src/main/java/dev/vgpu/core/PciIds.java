package dev.vgpu.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device names from the pci.ids database, kept only for the vendors asked for.
 *
 * <p>The file is read line by line, at most once, as UTF-8, in lines of at most {@value #MAX_LINE} characters (a
 * longer line is skipped with a WARN naming the file and line, never held whole); lines of other vendors and subsystems are skipped
 * without being kept, and reading stops after the last vendor asked for or at the class section, so a
 * 1.5 MB database costs at most one pass and a few kilobytes of memory. Matching follows the file's layout
 * as upstream reads it: a vendor line starts with four hex digits; its device lines start with one tab and
 * four hex digits (the first line for a device wins); subsystem lines (two tabs) never match; comment lines
 * ({@code #}) are skipped anywhere; any other line (the next vendor, a blank line, the {@code C} class
 * section) ends the vendor's block, and only a vendor's first block counts.
 *
 * <p>Immutable and safe to share between threads.
 */
public final class PciIds {

    /** The NVIDIA PCI vendor id. */
    public static final String NVIDIA = "10de";

    private static final Logger LOG = LoggerFactory.getLogger(PciIds.class);
    private static final PciIds EMPTY = new PciIds(Map.of(), Optional.empty());
    /** The longest line read; longer ones are skipped with a WARN. */
    static final int MAX_LINE = 4096;

    /** vendor id (lowercase hex) → device id (lowercase hex) → name. */
    private final Map<String, Map<String, String>> names;
    private final Optional<Path> origin;

    private PciIds(Map<String, Map<String, String>> names, Optional<Path> origin) {
        this.names = names;
        this.origin = origin;
    }

    /** A lookup that knows no names. */
    public static PciIds empty() {
        return EMPTY;
    }

    /**
     * Reads the device names of some vendors from a pci.ids file. A missing file gives an empty lookup; an
     * unreadable one too, with a warning.
     */
    public static PciIds load(Path file, Set<String> vendors) {
        // UTF-8 as the file is written; malformed bytes become U+FFFD instead of failing the whole read
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8))) {
            return new PciIds(parseNames(reader, vendors, file.toString()), Optional.of(file));
        } catch (NoSuchFileException e) {
            return EMPTY;
        } catch (IOException e) {
            LOG.warn("cannot read pci.ids file {}, using numeric names: {}", file, e.toString());
            return EMPTY;
        }
    }

    /** The first existing, readable file of the candidates, loaded for the vendors; empty when none is. */
    public static PciIds loadFirst(List<Path> candidates, Set<String> vendors) {
        for (Path candidate : candidates) {
            if (Files.isRegularFile(candidate) && Files.isReadable(candidate)) {
                return load(candidate, vendors);
            }
        }
        return EMPTY;
    }

    /** Parses pci.ids text, keeping device names of the vendors asked for. */
    public static PciIds parse(Reader text, Set<String> vendors) throws IOException {
        BufferedReader reader = text instanceof BufferedReader b ? b : new BufferedReader(text);
        return new PciIds(parseNames(reader, vendors, "pci.ids text"), Optional.empty());
    }

    private static Map<String, Map<String, String>> parseNames(BufferedReader reader, Set<String> vendors,
                                                               String origin) throws IOException {
        Set<String> wanted = vendors.stream().map(v -> v.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
        Map<String, Map<String, String>> result = new HashMap<>();
        Map<String, String> current = null;
        BoundedLines lines = new BoundedLines(reader, origin);
        String line;
        while ((line = lines.next()) != null) {
            if (!line.isEmpty() && line.charAt(0) == '#') {
                continue;
            }
            if (line.isEmpty() || line.charAt(0) != '\t') {
                // any other line ends a vendor's block (as upstream reads it: "not a tab, so another vendor")
                current = null;
                if (result.size() == wanted.size() || line.startsWith("C ")) {
                    break; // every wanted vendor is read (each has one block), or the class section starts
                }
                if (line.length() >= 4 && isHex4(line, 0)) {
                    String vendor = line.substring(0, 4).toLowerCase(Locale.ROOT);
                    if (wanted.contains(vendor) && !result.containsKey(vendor)) {
                        current = new HashMap<>();
                        result.put(vendor, current);
                    }
                }
                continue;
            }
            if (current == null || line.length() < 6 || !isHex4(line, 1)) {
                continue; // subsystem lines start with two tabs and fail isHex4
            }
            String device = line.substring(1, 5).toLowerCase(Locale.ROOT);
            String name = line.substring(5).strip();
            if (!name.isEmpty()) {
                current.putIfAbsent(device, name);
            }
        }
        result.replaceAll((vendor, devices) -> Map.copyOf(devices));
        return Map.copyOf(result);
    }

    /**
     * Lines of at most {@value #MAX_LINE} characters: a longer one (no real pci.ids has lines over ~200) is skipped
     * with a WARN naming the origin and line number, without ever being held whole, so a hostile file cannot
     * exhaust the heap. Confined to the parsing thread.
     */
    private static final class BoundedLines {
        private final Reader in;
        private final String origin;
        private final char[] buffer = new char[8192];
        private final StringBuilder line = new StringBuilder(128);
        private int position;
        private int limit;
        private long number;

        BoundedLines(Reader in, String origin) {
            this.in = in;
            this.origin = origin;
        }

        /**
         * The next line without its terminator ({@code \n}, {@code \r\n} or {@code \r}), or null at the end. A line
         * that lies whole in the buffer becomes its string in one copy; only one that runs across a refill is
         * gathered piece by piece (a cold process reads the bundled section interpreted, where a call per character
         * was most of its cost).
         */
        String next() throws IOException {
            while (true) {
                if (position == limit && !fill()) {
                    return null;
                }
                line.setLength(0);
                long length = 0;
                boolean ended = false;
                while (!ended) {
                    int end = position;
                    while (end < limit && buffer[end] != '\n' && buffer[end] != '\r') {
                        end++;
                    }
                    int piece = end - position;
                    if (length + piece <= MAX_LINE) {
                        if (end < limit && length == 0) {
                            String whole = new String(buffer, position, piece);
                            position = end;
                            endOfLine();
                            number++;
                            return whole;
                        }
                        line.append(buffer, position, piece);
                    }
                    length += piece;
                    position = end;
                    if (end < limit) {
                        endOfLine();
                        ended = true;
                    } else if (!fill()) {
                        ended = true; // the last line, without a terminator
                    }
                }
                number++;
                if (length <= MAX_LINE) {
                    return line.toString();
                }
                LOG.warn("{}: line {} is longer than {} characters, skipping it", origin, number, MAX_LINE);
            }
        }

        /** Steps over the line's end at {@code position}: \n, \r, or \r\n (even split by a refill). */
        private void endOfLine() throws IOException {
            char terminator = buffer[position++];
            if (terminator == '\r' && (position < limit || fill()) && buffer[position] == '\n') {
                position++;
            }
        }

        /** Reads the next chunk into the buffer; false at the end. */
        private boolean fill() throws IOException {
            position = 0;
            limit = Math.max(in.read(buffer, 0, buffer.length), 0);
            return limit > 0;
        }
    }

    private static boolean isHex4(String line, int from) {
        for (int i = from; i < from + 4; i++) {
            char c = line.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The name of a device, e.g. {@code deviceName("10de", "2335")} → {@code GH100 [H200 SXM 141GB]}.
     *
     * @param vendor 4-hex vendor id, any case
     * @param device 4-hex device id, any case
     */
    public Optional<String> deviceName(String vendor, String device) {
        Map<String, String> devices = names.get(vendor.toLowerCase(Locale.ROOT));
        return devices == null ? Optional.empty() : Optional.ofNullable(devices.get(device.toLowerCase(Locale.ROOT)));
    }

    /** How many device names are kept, over all vendors. */
    public int size() {
        return names.values().stream().mapToInt(Map::size).sum();
    }

    /** The file the names came from, when loaded from one. */
    public Optional<Path> origin() {
        return origin;
    }

    @Override
    public String toString() {
        return "PciIds[" + size() + " names" + origin.map(p -> " from " + p).orElse("") + "]";
    }
}
