package dev.vgpu.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * File primitives of the fixture: every write creates missing parent directories, every link is relative
 * (as the kernel lays them out), and I/O errors become {@link UncheckedIOException} so tests stay short.
 */
final class TreeFiles {

    private TreeFiles() {
    }

    static void write(Path file, String content) {
        write(file, content.getBytes(StandardCharsets.UTF_8));
    }

    static void write(Path file, byte[] content) {
        try {
            mkdirs(file.getParent());
            Files.write(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * Replaces a file's content in one step (a new file renamed over it), so that a reader on another thread sees
     * the old content or the new, never an empty file; writes nothing when the content is already this.
     */
    static void replace(Path file, String content) {
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        try {
            boolean same = Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                    && Arrays.equals(Files.readAllBytes(file), bytes);
            if (same) {
                return;
            }
            mkdirs(file.getParent());
            Path next = file.resolveSibling("." + file.getFileName() + ".next");
            Files.write(next, bytes);
            Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    static void mkdirs(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create directory " + dir, e);
        }
    }

    /** Creates (or replaces) {@code link} pointing at {@code target} by a path relative to the link's directory. */
    static void relativeLink(Path link, Path target) {
        Path dir = link.toAbsolutePath().getParent();
        rawLink(link, dir.relativize(target.toAbsolutePath()).toString());
    }

    /** Creates (or replaces) a symbolic link with exactly this link text. */
    static void rawLink(Path link, String text) {
        try {
            mkdirs(link.getParent());
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, link.getFileSystem().getPath(text));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot link " + link + " -> " + text, e);
        }
    }

    /** The text of a symbolic link, or empty when it is not one. */
    static Optional<String> linkText(Path link) {
        try {
            return Optional.of(Files.readSymbolicLink(link).toString());
        } catch (NoSuchFileException | java.nio.file.NotLinkException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read link " + link, e);
        }
    }

    /** Deletes a file, link (not its target) or directory tree; absent is fine. Never follows links. */
    static void deleteTree(Path path) {
        try {
            if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                for (Path child : list(path)) {
                    deleteTree(child);
                }
            }
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + path, e);
        }
    }

    static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        try (Stream<Path> children = Files.list(dir)) {
            return new ArrayList<>(children.sorted().toList());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
