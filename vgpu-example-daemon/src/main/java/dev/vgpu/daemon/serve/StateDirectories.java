package dev.vgpu.daemon.serve;

import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.daemon.scan.ScanOptions;
import java.nio.file.Files;
import java.nio.file.Path;

/** The directories {@code serve} checks and prepares before it starts, in either mode. */
final class StateDirectories {

    private StateDirectories() {
    }

    /**
     * Checks that the state directory lies outside {@code keepOutOf} (the directory of {@code flag}, for the reason
     * {@code why}) and creates it, owner-only, when it is missing.
     *
     * @throws Refusal naming both directories, or why the state directory cannot be used
     */
    static Path prepare(ScanOptions.StateDir given, Path keepOutOf, String flag, String why) {
        Path dir = given.path();
        Path state = comparable(dir);
        Path outside = comparable(keepOutOf);
        if (state.startsWith(outside)) {
            throw new Refusal(given.origin() + " " + dir + (state.equals(outside) ? " is"
                    : " is inside") + " the " + flag + " " + keepOutOf + ", " + why + ": choose a directory outside"
                    + " it, such as /var/lib/vgpu");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new Refusal(given.origin() + " " + dir + " is not a directory");
        }
        try {
            if (!Files.isDirectory(dir)) {
                boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
                Files.createDirectories(dir, posix ? new java.nio.file.attribute.FileAttribute<?>[] {
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"))}
                        : new java.nio.file.attribute.FileAttribute<?>[0]);
            }
        } catch (java.io.IOException e) {
            throw new Refusal("cannot create " + given.origin() + " " + dir + ": " + e);
        }
        return dir;
    }

    /** The path with its existing part's links resolved, so that two spellings of one directory compare equal. */
    static Path comparable(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        Path existing = absolute;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return absolute;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(absolute));
        } catch (java.io.IOException e) {
            return absolute;
        }
    }

    /**
     * Refuses a directory that is not there.
     *
     * @throws Refusal naming the flag
     */
    static void requireDirectory(String option, Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new Refusal(option + " " + dir + " is not a directory");
        }
    }
}
