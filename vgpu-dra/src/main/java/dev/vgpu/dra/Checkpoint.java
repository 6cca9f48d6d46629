package dev.vgpu.dra;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The prepared claims on disk, so that a new process instance answers a repeated Prepare the same and can
 * Unprepare what an earlier one prepared (docs/DRA.md §2). Written whole and atomically after every change. A file
 * that cannot be read or parsed is logged at WARN and treated as empty: Unprepare then still removes the claim's
 * files by their names, which derive from the claim ({@link ClaimPreparer}).
 *
 * <p>Format, one record per line, fields separated by tabs (no field may hold a tab or a line break):
 * <pre>
 * vgpu-dra-checkpoint 1
 * claim  namespace name uid
 * device pool device request,request cdi-id,cdi-id
 * file   path
 * end
 * </pre>
 */
final class Checkpoint {

    private static final Logger LOG = LoggerFactory.getLogger(Checkpoint.class);
    private static final String HEADER = "vgpu-dra-checkpoint\t1";

    private Checkpoint() {
    }

    /** Thrown for a file that is not a checkpoint this version wrote. */
    private static final class Corrupt extends Exception {
        Corrupt(String message) {
            super(message, null, false, false);
        }
    }

    /** The claims kept in {@code file} by UID, in file order; empty when there is none or it is unusable. */
    static Map<String, PreparedClaim> load(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new LinkedHashMap<>();
        } catch (IOException | RuntimeException e) {
            LOG.warn("Cannot read the prepared-claims checkpoint {} ({}); starting without it: claims prepared"
                    + " before are unprepared by their file names", file, e.toString());
            return new LinkedHashMap<>();
        }
        try {
            return parse(lines);
        } catch (Corrupt e) {
            LOG.warn("The prepared-claims checkpoint {} is corrupt ({}); starting without it: claims prepared"
                    + " before are unprepared by their file names", file, e.getMessage());
            return new LinkedHashMap<>();
        }
    }

    /** Replaces {@code file} with these claims. */
    static void save(Path file, Collection<PreparedClaim> claims) throws IOException {
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        for (PreparedClaim claim : claims) {
            line(out, "claim", claim.claim().namespace(), claim.claim().name(), claim.claim().uid());
            for (PreparedDevice device : claim.devices()) {
                line(out, "device", device.pool(), device.device(), String.join(",", device.requestNames()),
                        String.join(",", device.cdiIds()));
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
                throw new IOException("cannot checkpoint the " + kind + " field \"" + dev.vgpu.core.internal.Printable.of(field)
                        + "\": empty, or holds a tab or a line break");
            }
            out.append('\t').append(field);
        }
        out.append('\n');
    }

    private static Map<String, PreparedClaim> parse(List<String> lines) throws Corrupt {
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new Corrupt("no \"" + HEADER.replace('\t', ' ') + "\" header");
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
                    throw new Corrupt("line " + (n + 1) + " does not start a claim");
                }
                claim = new ClaimRef(f[1], f[2], f[3]);
            } else if (kind.equals("device") && f.length == 5) {
                devices.add(new PreparedDevice(Arrays.asList(f[3].split(",")), f[1], f[2],
                        Arrays.asList(f[4].split(","))));
            } else if (kind.equals("file") && f.length == 2) {
                try {
                    files.add(Path.of(f[1]));
                } catch (RuntimeException e) {
                    throw new Corrupt("line " + (n + 1) + " names no path");
                }
            } else if (kind.equals("end") && f.length == 1) {
                if (claims.put(claim.uid(), new PreparedClaim(claim, devices, files)) != null) {
                    throw new Corrupt("claim " + claim.uid() + " is there twice");
                }
                claim = null;
                devices = new ArrayList<>();
                files = new ArrayList<>();
            } else {
                throw new Corrupt("line " + (n + 1) + " is not a claim's device, file or end");
            }
        }
        if (claim != null) {
            throw new Corrupt("the last claim has no end");
        }
        return claims;
    }
}
