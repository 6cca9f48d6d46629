package dev.vgpu.sysfs;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The vendor-vfio source's file in a state directory, {@value #FILE}: the profile names it learned, so that a card
 * that filled up while the daemon ran is still named after a restart without NVML (docs/RELIABILITY.md).
 *
 * <p>Format: UTF-8, lines ending in {@code \n}; the header {@value #HEADER}, then one line per name, five fields
 * separated by one tab each: the card's PF address, its PCI device id (four lowercase hex digits), the NVIDIA
 * driver version ({@code unknown} when the host had none), the type id (decimal) and the profile name:
 * <pre>
 * vgpu-vendor-vfio-names v1
 * 0000:1b:00.0	2335	550.54.14	1152	NVIDIA H200X-1-18C
 * </pre>
 * A profile name holds no control character (so no tab or line end) and at most {@value #MAX_NAME_CHARS}
 * characters; a name that does not is never written. Reading accepts exactly what writing produces: any other
 * header, a malformed line, a repeated (card, type), more than {@value #MAX_ENTRIES} names or more than
 * {@value #MAX_BYTES} bytes make the whole file unusable, described in a sentence, never an exception.
 *
 * <p>Files: never read or written through a symbolic link at {@value #FILE}'s path (reading refuses one; writing
 * renames a new file over it, replacing the link itself). Written to a temporary file in the same directory
 * (owner-only permissions where the file system has POSIX permissions), flushed to the disk and renamed over the
 * old file in one atomic step, so a crash leaves the old file or the new one. Stateless.
 */
final class LearnedNamesFile {

    /** The file's name in the state directory; the version in it changes with the format. */
    static final String FILE = "vendor-vfio-names.v1";
    /** The first line. */
    static final String HEADER = "vgpu-vendor-vfio-names v1";
    /** The largest file read; a real host's names take a few kilobytes. */
    static final int MAX_BYTES = 1 << 20;
    /** The most names read or written. */
    static final int MAX_ENTRIES = 4096;
    /** The longest profile name kept. */
    static final int MAX_NAME_CHARS = 256;

    private static final String TEMP_PREFIX = "." + FILE + ".";
    private static final String TEMP_SUFFIX = ".tmp";

    private LearnedNamesFile() {
    }

    /**
     * What a read found.
     *
     * @param names   card → type id → profile name; empty when the file is absent or unusable
     * @param problem why the file is not used; empty when it was read or is absent
     */
    record Contents(Map<TypeNameMemory.Card, Map<Long, String>> names, Optional<String> problem) {
        static Contents unusable(String problem) {
            return new Contents(Map.of(), Optional.of(problem));
        }
    }

    /** True when a profile name may be written: 1 to {@value #MAX_NAME_CHARS} characters, no control character. */
    static boolean storable(String name) {
        if (name.isEmpty() || name.length() > MAX_NAME_CHARS || !name.strip().equals(name)) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                return false;
            }
        }
        return true;
    }

    /** Reads {@value #FILE} in {@code directory}; a missing file (or directory) gives no names and no problem. */
    static Contents read(Path directory) {
        Path file = directory.resolve(FILE);
        byte[] bytes;
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (attributes.isSymbolicLink()) {
                return Contents.unusable("it is a symbolic link, which is never followed");
            }
            if (!attributes.isRegularFile()) {
                return Contents.unusable("it is not a regular file");
            }
            if (attributes.size() > MAX_BYTES) {
                return Contents.unusable("it has " + attributes.size() + " bytes, more than the " + MAX_BYTES
                        + " such a file can have");
            }
            bytes = readBounded(file);
        } catch (NoSuchFileException e) {
            return new Contents(Map.of(), Optional.empty());
        } catch (IOException e) {
            return Contents.unusable("it cannot be read: " + describe(e));
        }
        if (bytes == null) {
            return Contents.unusable("it grew past " + MAX_BYTES + " bytes while it was read");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return Contents.unusable("it is not UTF-8 text");
        }
        return parse(text);
    }

    /** At most {@value #MAX_BYTES} bytes of the file, opened without following a link; null when it has more. */
    private static byte[] readBounded(Path file) throws IOException {
        try (SeekableByteChannel in = Files.newByteChannel(file, Set.of(StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS))) {
            ByteBuffer buffer = ByteBuffer.allocate(Math.min(MAX_BYTES + 1, (int) Math.max(in.size(), 0) + 1));
            while (true) {
                if (!buffer.hasRemaining()) {
                    if (buffer.capacity() > MAX_BYTES) {
                        return null;
                    }
                    ByteBuffer larger = ByteBuffer.allocate(Math.min(MAX_BYTES + 1, buffer.capacity() * 2));
                    buffer.flip();
                    buffer = larger.put(buffer);
                }
                if (in.read(buffer) < 0) {
                    break;
                }
            }
            byte[] bytes = new byte[buffer.position()];
            buffer.flip().get(bytes);
            return bytes;
        }
    }

    /** Parses a whole file's text. */
    static Contents parse(String text) {
        if (text.isEmpty()) {
            return Contents.unusable("it is empty");
        }
        if (!text.startsWith(HEADER + "\n") && !text.equals(HEADER)) {
            int end = text.indexOf('\n');
            return Contents.unusable("its first line is not \"" + HEADER + "\" but \""
                    + SysfsFiles.printable(end < 0 ? text : text.substring(0, end)) + "\" (another program's file, or"
                    + " another version's)");
        }
        if (!text.endsWith("\n")) {
            return Contents.unusable("its last line is cut off (no line end)");
        }
        Map<TypeNameMemory.Card, Map<Long, String>> names = new HashMap<>();
        int count = 0;
        String[] lines = text.split("\n", -1);
        // lines[0] is the header and the last element is the empty text after the final line end.
        for (int i = 1; i < lines.length - 1; i++) {
            String[] fields = lines[i].split("\t", -1);
            String problem = fields.length != 5 ? "it has " + fields.length + " tab-separated fields, not 5"
                    : problemOf(fields);
            if (problem != null) {
                return Contents.unusable("line " + (i + 1) + " is not \"<PF address>\\t<device id>\\t<driver version>"
                        + "\\t<type id>\\t<profile name>\": " + problem);
            }
            if (++count > MAX_ENTRIES) {
                return Contents.unusable("it has more than " + MAX_ENTRIES + " names");
            }
            TypeNameMemory.Card card = new TypeNameMemory.Card(PciAddress.parse(fields[0]), fields[1], fields[2]);
            if (names.computeIfAbsent(card, c -> new HashMap<>()).put(Long.parseLong(fields[3]), fields[4]) != null) {
                return Contents.unusable("line " + (i + 1) + " names type " + fields[3] + " of card " + fields[0]
                        + " a second time");
            }
        }
        return new Contents(names, Optional.empty());
    }

    /** What is wrong with one line's five fields; null when nothing is. */
    private static String problemOf(String[] fields) {
        if (!SysfsFiles.isPciAddress(fields[0])) {
            return "\"" + SysfsFiles.printable(fields[0]) + "\" is not a PCI address";
        }
        if (!TypeNameMemory.Card.isDeviceId(fields[1])) {
            return "\"" + SysfsFiles.printable(fields[1]) + "\" is not four lowercase hex digits";
        }
        if (!TypeNameMemory.Card.isDriverVersion(fields[2])) {
            return "\"" + SysfsFiles.printable(fields[2]) + "\" is not a driver version";
        }
        if (fields[3].isEmpty() || fields[3].length() > 18 || !SysfsFiles.isDigits(fields[3])) {
            return "\"" + SysfsFiles.printable(fields[3]) + "\" is not a type id";
        }
        if (!storable(fields[4])) {
            return "\"" + SysfsFiles.printable(fields[4]) + "\" is not a profile name";
        }
        return null;
    }

    /** The text {@link #write} writes: the header, then the names sorted by card and type id. */
    static String format(Map<TypeNameMemory.Card, Map<Long, String>> names) {
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        new TreeMap<>(names).forEach((card, types) -> new TreeMap<>(types).forEach((typeId, name) -> {
            if (!storable(name)) {
                throw new IllegalArgumentException("not a storable profile name: " + SysfsFiles.printable(name));
            }
            out.append(card.pf()).append('\t').append(card.deviceId()).append('\t').append(card.driverVersion())
                    .append('\t').append(typeId).append('\t').append(name).append('\n');
        }));
        return out.toString();
    }

    /**
     * Replaces {@value #FILE} in {@code directory} with these names (at most {@value #MAX_ENTRIES}, every one
     * {@link #storable}), creating the directory (owner-only) when it is missing.
     *
     * @throws IOException when the directory cannot be made or the file cannot be written or renamed into place;
     *                     no temporary file is left behind then
     */
    static void write(Path directory, Map<TypeNameMemory.Card, Map<Long, String>> names) throws IOException {
        byte[] bytes = format(names).getBytes(StandardCharsets.UTF_8);
        boolean posix = directory.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (!Files.isDirectory(directory)) {
            Files.createDirectories(directory, posix ? new FileAttribute<?>[] {
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"))}
                    : new FileAttribute<?>[0]);
        }
        // A new name each time, created exclusively: nothing that stands at that path is ever written through.
        Path temp = Files.createTempFile(directory, TEMP_PREFIX, TEMP_SUFFIX, posix ? new FileAttribute<?>[] {
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))}
                : new FileAttribute<?>[0]);
        try {
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                out.force(true);
            }
            Files.move(temp, directory.resolve(FILE), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        syncDirectory(directory);
    }

    /** Makes the rename itself durable where the file system lets a directory be synced; best effort. */
    private static void syncDirectory(Path directory) {
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Not every file system opens a directory as a channel; the rename is atomic without it.
        }
    }

    /** A file failure in words: the reason the system gave, else the exception's kind. */
    static String describe(IOException e) {
        if (e instanceof FileSystemException failure && failure.getReason() != null) {
            return SysfsFiles.printable(failure.getReason());
        }
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + SysfsFiles.printable(e.getMessage()));
    }
}
