package dev.vgpu.configurator.sysfs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Plain reads and writes of sysfs attribute files and links (the configurator runs rarely, so no memo and no native
 * reader). Reads stop after {@value #MAX_BYTES} bytes: an attribute is at most a page; more means the file is not
 * one. The messages of the exceptions carry file text as it is: {@link ProblemText#describe} escapes them. Stateless.
 */
final class HostFiles {

    /** The most bytes read from one file. */
    static final int MAX_BYTES = 64 * 1024;

    private HostFiles() {
    }

    /**
     * The file's text (UTF-8, malformed bytes replaced), at most {@value #MAX_BYTES} bytes of it. Only a regular file
     * (after links) is opened: a FIFO or device node where an attribute belongs is refused, never waited on.
     */
    static String read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            if (!Files.exists(file)) {
                throw new NoSuchFileException(file.toString());
            }
            throw new IOException(file.getFileName() + " is not a regular file");
        }
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(MAX_BYTES), StandardCharsets.UTF_8);
        }
    }

    /** A decimal number file such as {@code sriov_numvfs}: digits, whitespace around them trimmed. */
    static long number(Path file) throws IOException {
        String text = read(file).strip();
        if (text.isEmpty() || text.length() > 18 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IOException(file.getFileName() + " is not a decimal number: \"" + text + "\"");
        }
        return Long.parseLong(text);
    }

    /** A {@code 0x}-prefixed 16-bit hex id file such as {@code device} ({@code 0x2335}). */
    static int hexId(Path file) throws IOException {
        String text = read(file).strip();
        if (!text.matches("0x[0-9a-fA-F]{4}")) {
            throw new IOException(file.getFileName() + " is not 0x and four hex digits: \"" + text + "\"");
        }
        return Integer.parseInt(text.substring(2), 16);
    }

    /** The last name of a symbolic link's text ({@code driver} → {@code nvidia}). */
    static String linkName(Path link) throws IOException {
        Path target = Files.readSymbolicLink(link).getFileName();
        if (target == null) {
            throw new IOException(link.getFileName() + " links to no name");
        }
        return target.toString();
    }

    /** True when the path exists, without following a last link. */
    static boolean exists(Path path) {
        return Files.exists(path, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Writes a number and a line end to an existing attribute file, as {@code echo N > file} does; never creates a
     * file (a missing one is a {@link NoSuchFileException}).
     */
    static void writeNumber(Path file, long value) throws IOException {
        Files.write(file, (value + "\n").getBytes(StandardCharsets.US_ASCII), StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
    }
}
