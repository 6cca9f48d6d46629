package dev.vgpu.dra;

import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.List;

/**
 * Where the plugin's sockets, lock and files live (docs/DRA.md §1, §5, §6), all derived from the driver name and
 * three directories: the one place that names them. Paths are absolute: the kubelet dials the endpoint as given, and a
 * CDI mount's host path must be one.
 *
 * @param driver      the driver name
 * @param kubeletRoot the kubelet's root directory, {@code /var/lib/kubelet} on a node
 * @param cdiDir      where CDI specs go, {@code /var/run/cdi} on a node
 * @param stateDir    where the prepared-claims checkpoint is kept
 * @param podUid      the UID of the pod the plugin runs in ({@code POD_UID} from the downward API), when known: the
 *                    sockets then carry it, so that an old and a new pod of a rolling update never share a socket
 *                    name (the Go helper's {@code RollingUpdate} naming)
 */
record PluginPaths(DriverName driver, Path kubeletRoot, Path cdiDir, Path stateDir, Optional<String> podUid) {

    /** A pod UID as the API server makes them: safe in a file name. */
    private static final java.util.regex.Pattern UID = java.util.regex.Pattern.compile("[A-Za-z0-9][A-Za-z0-9-]{0,63}");

    PluginPaths {
        kubeletRoot = kubeletRoot.toAbsolutePath().normalize();
        cdiDir = cdiDir.toAbsolutePath().normalize();
        stateDir = stateDir.toAbsolutePath().normalize();
        Objects.requireNonNull(podUid, "podUid");
        podUid.ifPresent(PluginPaths::requirePodUid);
    }

    /** Paths without a pod UID (wave-3 socket names). */
    PluginPaths(DriverName driver, Path kubeletRoot, Path cdiDir, Path stateDir) {
        this(driver, kubeletRoot, cdiDir, stateDir, Optional.empty());
    }

    /**
     * Checks a pod UID: letters, digits and {@code -}, at most 64, as the API server's UUIDs are.
     *
     * @throws IllegalArgumentException naming the value
     */
    static String requirePodUid(String uid) {
        if (uid == null || !UID.matcher(uid).matches()) {
            throw new IllegalArgumentException("a pod UID (POD_UID) is 1-64 letters, digits and '-', starting with a"
                    + " letter or digit, got \"" + dev.vgpu.core.internal.Printable.of(String.valueOf(uid)) + "\"");
        }
        return uid;
    }

    /**
     * The socket the kubelet's plugin watcher finds: {@code <kubelet-root>/plugins_registry/<driver>-reg.sock}; with a
     * pod UID {@code <driver>-<podUid>-reg.sock}, or, where that path would pass {@value UnixDomainTransport#MAX_PATH_BYTES} bytes,
     * {@code <driver>-<8 hex digits of the UID's SHA-256>-reg.sock}.
     */
    Path registrationSocket() {
        return registryDir().resolve(fitting(registryDir(), driver + "-", "-reg.sock"));
    }

    /** {@code <before><podUid><after>}, or with the UID's hash where that is too long; {@code <before>} cut. */
    private String fitting(Path dir, String before, String after) {
        if (podUid.isEmpty()) {
            return before.substring(0, before.length() - 1) + after;
        }
        String full = before + podUid.get() + after;
        if (UnixDomainTransport.pathBytes(dir.resolve(full)) <= UnixDomainTransport.MAX_PATH_BYTES) {
            return full;
        }
        return before + hash(podUid.get()) + after;
    }

    private static String hash(String text) {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(digest, 0, 4);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** {@code <kubelet-root>/plugins_registry}, the directory the kubelet's plugin watcher watches. */
    Path registryDir() {
        return kubeletRoot.resolve("plugins_registry");
    }

    /** {@code <kubelet-root>/plugins/<driver>}, the plugin's own directory. */
    Path pluginDir() {
        return kubeletRoot.resolve("plugins").resolve(driver.value());
    }

    /**
     * The DRA service endpoint: {@code <kubelet-root>/plugins/<driver>/dra.sock}; with a pod UID
     * {@code dra-<podUid>.sock}, or {@code dra-<8 hex digits of its SHA-256>.sock} where that would be too long.
     */
    Path draSocket() {
        return pluginDir().resolve(fitting(pluginDir(), "dra-", ".sock"));
    }

    /** Both sockets, the DRA one first (it is served first: once the kubelet finds the plugin, its endpoint answers). */
    List<Path> sockets() {
        return List.of(draSocket(), registrationSocket());
    }

    /**
     * {@code <kubelet-root>/plugins/<driver>/.vgpu-dra.lock}: one process serves a driver on a kubelet root. Beside
     * the DRA socket, not in the state directory, so that two daemons with different state directories still meet.
     */
    Path lock() {
        return pluginDir().resolve(".vgpu-dra.lock");
    }

    /** {@code <kubelet-root>/plugins/<driver>/dra-device-metadata}, under which every claim's metadata lives. */
    Path metadataRoot() {
        return pluginDir().resolve("dra-device-metadata");
    }

    /**
     * The host directory of one claim's metadata files: {@code dra-device-metadata/<namespace>_<uid>}. Keyed by the
     * UID, so that a claim deleted and created again under the same name never shares a directory with the old one,
     * whose Unprepare may come later (the Go helper's {@code <namespace>_<name>} would); at most 100 bytes, where a
     * claim name of 253 would pass a file name's 255. The container sees the file where KubeVirt looks, whatever the
     * host path (§5).
     */
    Path metadataDir(ClaimRef claim) {
        return metadataRoot().resolve(claim.namespace() + "_" + claim.uid());
    }

    /** The claim's CDI spec, {@code <cdi-dir>/<driver>-claim_<uid>.json} (CDI's transient-spec naming). */
    Path claimSpec(String uid) {
        return cdiDir.resolve(driver + "-claim_" + uid + ".json");
    }

    /** The CDI spec mounting one request's metadata, {@code <cdi-dir>/<driver>_metadata_<uid>_<request>.json}. */
    Path metadataSpec(String uid, String baseRequest) {
        return cdiDir.resolve(metadataSpecPrefix(uid) + baseRequest + ".json");
    }

    /** What every metadata spec file name of a claim starts with. */
    String metadataSpecPrefix(String uid) {
        return driver + "_metadata_" + uid + "_";
    }

    /** The prepared-claims checkpoint. */
    Path checkpoint() {
        return stateDir.resolve(PreparedDevices.FILE);
    }

    /**
     * Whether Prepare could have written {@code path} for a claim: a spec file directly in the CDI directory with one
     * of this driver's names, or a claim directory directly under the metadata root. Anything else named by a
     * checkpoint (a path elsewhere, {@code ..}, the directories themselves) is never deleted.
     */
    boolean mayHold(Path path) {
        if (!path.isAbsolute() || !path.equals(path.normalize()) || path.getFileName() == null) {
            return false;
        }
        String name = path.getFileName().toString();
        if (cdiDir.equals(path.getParent())) {
            return name.endsWith(".json") && (name.startsWith(driver + "-claim_")
                    || name.startsWith(driver + "_metadata_"));
        }
        return metadataRoot().equals(path.getParent()) && !name.startsWith(".");
    }
}
