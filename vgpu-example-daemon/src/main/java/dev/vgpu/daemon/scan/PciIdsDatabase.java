package dev.vgpu.daemon.scan;

import dev.vgpu.core.PciIds;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The pci.ids names in use and where they came from. Passthrough resource names are built from them and users
 * write those names into the KubeVirt CR, so the source is said at start and in {@code --version}.
 *
 * <p>Order: the file given with {@code --pci-ids}; else the first readable system file; else the NVIDIA section
 * of a pinned pci.ids bundled in the jar ({@value #BUNDLED}), so an image without a system database still names
 * resources the same way on every rebuild.
 *
 * @param names       the NVIDIA device names
 * @param description where they came from and the database's version, for logs
 */
public record PciIdsDatabase(PciIds names, String description) {

    /** The bundled NVIDIA section, next to this class. */
    public static final String BUNDLED = "nvidia-pci.ids";

    /** Loads a file that was checked to be readable (an empty file is valid: no names). */
    public static PciIdsDatabase file(Path file) {
        return new PciIdsDatabase(PciIds.load(file, Set.of(PciIds.NVIDIA)), file + versionSuffix(file));
    }

    /** The first readable candidate, else the bundled section. */
    public static PciIdsDatabase firstOrBundled(List<Path> candidates) {
        for (Path candidate : candidates) {
            if (Files.isRegularFile(candidate) && Files.isReadable(candidate)) {
                return file(candidate);
            }
        }
        return bundled();
    }

    /** The pinned NVIDIA section in the jar. */
    public static PciIdsDatabase bundled() {
        try (InputStream in = open()) {
            PciIds names = PciIds.parse(new InputStreamReader(in, StandardCharsets.UTF_8), Set.of(PciIds.NVIDIA));
            return new PciIdsDatabase(names, "bundled NVIDIA section, version " + bundledVersion());
        } catch (IOException e) {
            throw new UncheckedIOException("the bundled " + BUNDLED + " is unreadable", e);
        }
    }

    /** The {@code Version:} of the bundled section, e.g. {@code 2025.07.11 + 2026.08.22}. */
    public static String bundledVersion() {
        try (InputStream in = open()) {
            return version(in).orElseThrow(() -> new IllegalStateException("the bundled " + BUNDLED
                    + " has no Version header"));
        } catch (IOException e) {
            throw new UncheckedIOException("the bundled " + BUNDLED + " is unreadable", e);
        }
    }

    private static InputStream open() throws IOException {
        InputStream in = PciIdsDatabase.class.getResourceAsStream(BUNDLED);
        if (in == null) {
            throw new IOException(BUNDLED + " is missing from the jar");
        }
        return in;
    }

    private static String versionSuffix(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return version(in).map(v -> " (version " + v + ")").orElse("");
        } catch (IOException e) {
            return "";
        }
    }

    /** The {@code #\tVersion: X} line of a pci.ids header (the leading comment block), if any. */
    static Optional<String> version(InputStream in) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null && (line.isEmpty() || line.startsWith("#"))) {
            String text = line.replaceFirst("^#\\s*", "");
            if (text.startsWith("Version:")) {
                return Optional.of(text.substring("Version:".length()).strip()).filter(v -> !v.isEmpty());
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return description + ", " + names.size() + " NVIDIA names";
    }
}
