package dev.vgpu.dra;

import dev.vgpu.core.internal.Printable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The prepared claims on disk, so that a new process instance answers a repeated Prepare the same and can
 * Unprepare what an earlier one prepared (docs/DRA.md §2). Written whole and atomically after every change.
 *
 * <p>Read as the daemon's other state files are (docs/RELIABILITY.md, "DRA mode"): never through a symbolic link,
 * only a regular file (a FIFO planted there is refused without being opened, so the start never hangs), at most
 * {@value #MAX_BYTES} bytes, strict UTF-8. A file that is none of these, or does not parse, is one WARN naming it
 * and treated as empty: Unprepare then still removes a claim's files by their names, which derive from the claim. A
 * path in it that Prepare could not have written ({@link PluginPaths#mayHold}: outside the CDI directory and the
 * metadata root, or the directories themselves) is dropped with one WARN naming it, so a forged entry never makes
 * Unprepare delete anything else.
 *
 * <p>Format, one record per line, fields separated by tabs (no field may hold a tab or a line break):
 * <pre>
 * vgpu-dra-checkpoint 1
 * claim  namespace name uid
 * device pool device request,request cdi-id,cdi-id
 * admin  pool device request,request cdi-id,cdi-id     (a device prepared with admin access)
 * file   path
 * end
 * </pre>
 */
final class Checkpoint {

    /** The largest checkpoint read: a prepared claim takes well under a KiB, so thousands fit. */
    static final int MAX_BYTES = 4 << 20;

    private static final Logger LOG = LoggerFactory.getLogger(Checkpoint.class);
    private static final String HEADER = "vgpu-dra-checkpoint\t1";
    private static final String EMPTY_NOTE = "; starting without it: claims prepared before are unprepared by their"
            + " file names";

    private Checkpoint() {
    }

    /** Thrown for a file that is not a checkpoint this version wrote, or cannot be one. */
    private static final class Unusable extends Exception {
        Unusable(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * The claims kept in {@code file} by UID, in file order; empty when there is none or it is unusable (one WARN).
     *
     * @param mayHold whether a path in the file is one Prepare could have written
     */
    static Map<String, PreparedClaim> load(Path file, Predicate<Path> mayHold) {
        try {
            Map<String, PreparedClaim> claims = parse(read(file));
            return confine(file, claims, mayHold);
        } catch (NoSuchFileException e) {
            return new LinkedHashMap<>();
        } catch (IOException e) {
            LOG.warn("Cannot read the prepared-claims checkpoint {} ({}){}", file, Printable.of(e.toString(), 200),
                    EMPTY_NOTE);
        } catch (Unusable e) {
            LOG.warn("The prepared-claims checkpoint {} is not usable: {}{}", file, e.getMessage(), EMPTY_NOTE);
        }
        return new LinkedHashMap<>();
    }

    /**
     * The claims kept in {@code file}, strictly: a file that is not a usable checkpoint is an {@link IOException}
     * naming it (for a reader that must not guess, such as the vGPU configurator's in-use check).
     *
     * @throws NoSuchFileException when there is no file
     */
    static Map<String, PreparedClaim> loadStrictly(Path file) throws IOException {
        try {
            return parse(read(file));
        } catch (Unusable e) {
            throw new IOException("the prepared-claims checkpoint " + file + " is not usable: " + e.getMessage());
        }
    }

    /** The file's text: a regular file, not through a link, at most {@value #MAX_BYTES} bytes of UTF-8. */
    private static String read(Path file) throws IOException, Unusable {
        BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS);
        if (attributes.isSymbolicLink()) {
            throw new Unusable("it is a symbolic link, which is never followed");
        }
        if (!attributes.isRegularFile()) {
            throw new Unusable("it is not a regular file (a FIFO, socket, device or directory)");
        }
        if (attributes.size() > MAX_BYTES) {
            throw new Unusable("it has " + attributes.size() + " bytes, more than the " + MAX_BYTES
                    + " a checkpoint may have");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw new Unusable("it grew past " + MAX_BYTES + " bytes while it was read");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new Unusable("it is not UTF-8 text");
        }
    }

    /** The claims with every path Prepare could not have written dropped, each drop in one WARN. */
    private static Map<String, PreparedClaim> confine(Path file, Map<String, PreparedClaim> claims,
                                                      Predicate<Path> mayHold) {
        List<String> dropped = new ArrayList<>();
        Map<String, PreparedClaim> out = new LinkedHashMap<>();
        claims.forEach((uid, claim) -> {
            List<Path> kept = claim.files().stream().filter(mayHold).toList();
            claim.files().stream().filter(p -> !mayHold.test(p)).forEach(p -> dropped.add(p.toString()));
            out.put(uid, new PreparedClaim(claim.claim(), claim.devices(), kept));
        });
        if (!dropped.isEmpty()) {
            LOG.warn("The prepared-claims checkpoint {} names {} path(s) outside what Prepare writes, which are never"
                    + " deleted: {}", file, dropped.size(), Printable.of(String.join(", ", dropped), 1_000));
        }
        return out;
    }

    /** Replaces {@code file} with these claims. */
    static void save(Path file, Collection<PreparedClaim> claims) throws IOException {
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        for (PreparedClaim claim : claims) {
            line(out, "claim", claim.claim().namespace(), claim.claim().name(), claim.claim().uid());
            for (PreparedDevice device : claim.devices()) {
                line(out, device.adminAccess() ? "admin" : "device", device.pool(), device.device(),
                        String.join(",", device.requestNames()), String.join(",", device.cdiIds()));
            }
            for (Path path : claim.files()) {
                line(out, "file", path.toString());
            }
            out.append("end\n");
        }
        AtomicFiles.write(file, out.toString());
    }

    private static void line(StringBuilder out, String kind, String... fields) throws IOException {
        out.append(kind);
        for (String field : fields) {
            if (field.isEmpty() || field.indexOf('\t') >= 0 || field.indexOf('\n') >= 0 || field.indexOf('\r') >= 0) {
                throw new IOException("cannot checkpoint the " + kind + " field \"" + Printable.of(field)
                        + "\": empty, or holds a tab or a line break");
            }
            out.append('\t').append(field);
        }
        out.append('\n');
    }

    private static Map<String, PreparedClaim> parse(String text) throws Unusable {
        List<String> lines = text.lines().toList();
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new Unusable("no \"" + HEADER.replace('\t', ' ') + "\" header");
        }
        Map<String, PreparedClaim> claims = new LinkedHashMap<>();
        ClaimRef claim = null;
        List<PreparedDevice> devices = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        for (int n = 1; n < lines.size(); n++) {
            String[] f = lines.get(n).split("\t", -1);
            String kind = f[0];
            if (claim == null) {
                if (!kind.equals("claim") || f.length != 4) {
                    throw new Unusable("line " + (n + 1) + " does not start a claim");
                }
                claim = new ClaimRef(f[1], f[2], f[3]);
            } else if ((kind.equals("device") || kind.equals("admin")) && f.length == 5) {
                devices.add(new PreparedDevice(Arrays.asList(f[3].split(",")), f[1], f[2],
                        Arrays.asList(f[4].split(",")), kind.equals("admin")));
            } else if (kind.equals("file") && f.length == 2) {
                try {
                    files.add(Path.of(f[1]));
                } catch (InvalidPathException e) {
                    throw new Unusable("line " + (n + 1) + " names no path");
                }
            } else if (kind.equals("end") && f.length == 1) {
                if (claims.put(claim.uid(), new PreparedClaim(claim, devices, files)) != null) {
                    throw new Unusable("claim " + claim + " is there twice");
                }
                claim = null;
                devices = new ArrayList<>();
                files = new ArrayList<>();
            } else {
                throw new Unusable("line " + (n + 1) + " is not a claim's device, file or end");
            }
        }
        if (claim != null) {
            throw new Unusable("the last claim has no end");
        }
        return claims;
    }
}
