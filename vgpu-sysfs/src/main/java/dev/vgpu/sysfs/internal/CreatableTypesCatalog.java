package dev.vgpu.sysfs.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One {@code nvidia/creatable_vgpu_types} file of the NVIDIA vGPU driver, parsed: the one parser of that table, for
 * the vendor-VFIO source and the vGPU configurator (this package is exported to {@code dev.vgpu.configurator} only;
 * it is not API).
 *
 * <p>The driver prints a header row, then one row per type with the id left-justified in a padded column:
 * <pre>
 * ID    : vGPU Name
 * 1145  : NVIDIA L40S-1B
 * 2164  : NVIDIA L40S-3B
 * </pre>
 * and only the header when the card has no room left. Parsing tolerates any padding around the {@code :},
 * CRLF line ends and blank lines. The first non-blank line is the header when its first token is not a number;
 * every other line must be {@code <decimal id> : <name>}, and a line that is not is kept in {@link #rejected()}
 * so the caller can report it: nothing is dropped silently.
 * <pre>{@code
 * CreatableTypesCatalog catalog = CreatableTypesCatalog.parse(Files.readString(file));
 * catalog.entries().forEach(e -> System.out.println(e.typeId() + " -> " + e.name()));
 * }</pre>
 *
 * @param entries  the rows in file order (an id may repeat; callers decide what a conflict means)
 * @param rejected the lines that were neither header, blank, nor a row, stripped
 */
public record CreatableTypesCatalog(List<Entry> entries, List<String> rejected) {

    /** Copies both lists. */
    public CreatableTypesCatalog {
        entries = List.copyOf(entries);
        rejected = List.copyOf(rejected);
    }

    /**
     * One row.
     *
     * @param typeId the card-local vGPU type id, non-negative
     * @param name   the profile name as printed, stripped, non-blank (e.g. {@code NVIDIA H200X-141C})
     */
    public record Entry(long typeId, String name) {

        /** Validates the id and the name. */
        public Entry {
            Objects.requireNonNull(name, "name");
            if (typeId < 0 || name.isBlank()) {
                throw new IllegalArgumentException("a catalog entry needs a non-negative id and a name, got "
                        + typeId + " : \"" + name + "\"");
            }
        }
    }

    /** Parses the file's text. Never throws: what cannot be read as a row ends up in {@link #rejected()}. */
    public static CreatableTypesCatalog parse(String text) {
        List<Entry> entries = new ArrayList<>();
        List<String> rejected = new ArrayList<>();
        boolean first = true;
        for (String raw : text.split("\n", -1)) {
            String line = raw.strip();
            if (line.isEmpty()) {
                continue;
            }
            Entry entry = row(line);
            if (entry != null) {
                entries.add(entry);
            } else if (!(first && !startsWithDigit(line))) {
                rejected.add(line);
            }
            first = false;
        }
        return new CreatableTypesCatalog(entries, rejected);
    }

    /** True when the file listed no types (only the header, or nothing): the card is full or the VF configured. */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    private static boolean startsWithDigit(String line) {
        return line.charAt(0) >= '0' && line.charAt(0) <= '9';
    }

    private static Entry row(String line) {
        int colon = line.indexOf(':');
        if (colon <= 0) {
            return null;
        }
        String id = line.substring(0, colon).strip();
        String name = line.substring(colon + 1).strip();
        if (id.isEmpty() || id.length() > 18 || name.isEmpty() || !id.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return null;
        }
        return new Entry(Long.parseLong(id), name);
    }
}
