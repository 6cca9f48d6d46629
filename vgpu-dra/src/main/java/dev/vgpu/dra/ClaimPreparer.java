package dev.vgpu.dra;

import dev.vgpu.attach.Handover;
import dev.vgpu.attach.Handovers;
import dev.vgpu.attach.VfioNodes;
import dev.vgpu.core.Device;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Printable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prepares and unprepares claims (docs/DRA.md §2, §5): reads each claim's allocation, keeps this driver's results,
 * checks the devices with {@link Handovers} ({@link VfioNodes#LEGACY}, what KubeVirt's DRA path reads), writes the
 * claim's CDI spec and per request the metadata file and its CDI mount, and keeps the answer in the checkpoint.
 *
 * <p>Confined to the plugin's claims thread: the prepared map, the checkpoint file and (through {@link ClaimFiles})
 * every file under the CDI and metadata directories are written by that thread only. The snapshot comes from a supplier that reads a
 * {@code volatile} the rescan thread writes.
 */
final class ClaimPreparer {

    private static final Logger LOG = LoggerFactory.getLogger(ClaimPreparer.class);
    /** A DNS label: namespaces, request names. */
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
    /** A DNS subdomain: claim names. */
    private static final Pattern SUBDOMAIN = Pattern.compile("(?=.{1,253}$)[a-z0-9]([a-z0-9.-]*[a-z0-9])?");
    /** A UID as the API server makes them (a UUID), safe in file and CDI device names. */
    private static final Pattern UID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9-]{0,62}");

    private final PluginPaths paths;
    private final String pool;
    private final Handovers handovers;
    private final ClaimReader reader;
    private final Supplier<Snapshot> snapshot;
    private final ClaimFiles files;
    /** Claim UID to what was prepared, in checkpoint order. */
    private final Map<String, PreparedClaim> prepared;

    ClaimPreparer(PluginPaths paths, String pool, Handovers handovers, ClaimReader reader,
                  Supplier<Snapshot> snapshot) {
        this.paths = paths;
        this.pool = pool;
        this.handovers = handovers;
        this.reader = reader;
        this.snapshot = snapshot;
        this.files = new ClaimFiles(paths);
        this.prepared = Checkpoint.load(paths.checkpoint());
        if (!prepared.isEmpty()) {
            LOG.info("Restored {} prepared claims from {}", prepared.size(), paths.checkpoint());
        }
    }

    /** Why a claim cannot be prepared; an answer, so without a stack trace. */
    private static final class ClaimError extends Exception {
        ClaimError(String message) {
            super(message, null, false, false);
        }
    }

    /** How many claims are prepared now. */
    int preparedCount() {
        return prepared.size();
    }

    /** One outcome per distinct UID of the request, in request order. */
    Map<String, ClaimOutcome> prepare(List<ClaimRef> claims) {
        Map<String, ClaimOutcome> out = new LinkedHashMap<>();
        for (ClaimRef claim : claims) {
            if (!out.containsKey(claim.uid())) {
                ClaimOutcome outcome;
                try {
                    outcome = new ClaimOutcome.Prepared(prepare(claim));
                } catch (ClaimError e) {
                    LOG.warn("Cannot prepare claim {}: {}", claim, e.getMessage());
                    outcome = new ClaimOutcome.Failed(e.getMessage());
                }
                out.put(claim.uid(), outcome);
            }
        }
        return out;
    }

    /** One answer per distinct UID of the request: empty when unprepared (or never prepared), else the error. */
    Map<String, Optional<String>> unprepare(List<ClaimRef> claims) {
        Map<String, Optional<String>> out = new LinkedHashMap<>();
        for (ClaimRef claim : claims) {
            if (!out.containsKey(claim.uid())) {
                Optional<String> error = unprepare(claim);
                error.ifPresent(e -> LOG.warn("Cannot unprepare claim {}: {}", claim, e));
                out.put(claim.uid(), error);
            }
        }
        return out;
    }

    private List<PreparedDevice> prepare(ClaimRef ref) throws ClaimError {
        checkRef(ref);
        PreparedClaim earlier = prepared.get(ref.uid());
        if (earlier != null) {
            LOG.debug("Claim {} is prepared already; answering the same devices", ref);
            return earlier.devices();
        }
        AllocatedClaim claim = read(ref);
        List<AllocatedDevice> ours = claim.results().stream()
                .filter(r -> r.driver().equals(paths.driver().value())).toList();
        if (ours.isEmpty()) {
            return List.of();
        }
        Snapshot now = snapshot.get();
        Map<String, Device> byName = DeviceNames.index(now);
        List<Device> devices = new ArrayList<>();
        for (AllocatedDevice result : ours) {
            checkRequest(result.request());
            if (!result.pool().equals(pool)) {
                throw new ClaimError("device " + Printable.of(result.device()) + " is in pool "
                        + Printable.of(result.pool()) + ", not this node's pool " + pool);
            }
            Device device = byName.get(result.device());
            if (device == null) {
                throw new ClaimError("unknown device " + Printable.of(result.device()) + ": not advertised on this"
                        + " node");
            }
            for (PreparedClaim other : prepared.values()) {
                if (other.holds(pool, result.device())) {
                    throw new ClaimError("device " + result.device() + " is already prepared for claim "
                            + other.claim());
                }
            }
            devices.add(device);
        }
        Handover handover = handovers.check(now, devices, VfioNodes.LEGACY);
        if (handover instanceof Handover.Refused refused) {
            throw new ClaimError(refused.reason());
        }
        PreparedClaim done;
        try {
            done = files.write(claim, ours, (Handover.Granted) handover);
        } catch (IOException e) {
            throw new ClaimError("cannot write the CDI spec or device metadata of claim " + ref + ": "
                    + e.getMessage());
        }
        prepared.put(ref.uid(), done);
        try {
            Checkpoint.save(paths.checkpoint(), prepared.values());
        } catch (IOException e) {
            prepared.remove(ref.uid());
            ClaimFiles.deleteQuietly(done.files());
            throw new ClaimError("cannot write the checkpoint " + paths.checkpoint() + ": " + e.getMessage());
        }
        LOG.info("Prepared claim {}: {}", ref, ours.stream().map(AllocatedDevice::device).toList());
        return done.devices();
    }

    private AllocatedClaim read(ClaimRef ref) throws ClaimError {
        ClaimReader.Answer answer;
        try {
            answer = reader.read(ref);
        } catch (RuntimeException e) {
            throw new ClaimError("cannot read claim " + ref + ": " + e);
        }
        if (answer instanceof ClaimReader.Unavailable unavailable) {
            throw new ClaimError(unavailable.reason());
        }
        if (!(answer instanceof ClaimReader.Allocated allocated)) {
            throw new ClaimError("cannot read claim " + ref + ": the reader answered nothing");
        }
        AllocatedClaim claim = allocated.claim();
        if (!claim.claim().equals(ref)) {
            throw new ClaimError("claim " + ref.namespace() + "/" + ref.name() + " read as " + claim.claim()
                    + ", not the claim the kubelet asked for (" + ref.uid() + ")");
        }
        Optional<String> podClaimName = claim.podClaimName();
        if (podClaimName.isPresent() && !LABEL.matcher(podClaimName.get()).matches()) {
            throw new ClaimError("claim " + ref + " has a pod claim name that is not a DNS label: \""
                    + Printable.of(podClaimName.get()) + "\"");
        }
        return claim;
    }

    private Optional<String> unprepare(ClaimRef ref) {
        PreparedClaim claim = prepared.get(ref.uid());
        List<Path> written = claim != null ? claim.files() : filesByName(ref);
        try {
            for (Path file : written) {
                AtomicFiles.delete(file);
            }
        } catch (IOException e) {
            return Optional.of("cannot delete the files of claim " + ref + ": " + e);
        }
        if (claim != null) {
            prepared.remove(ref.uid());
            try {
                Checkpoint.save(paths.checkpoint(), prepared.values());
            } catch (IOException e) {
                prepared.put(ref.uid(), claim);
                return Optional.of("cannot write the checkpoint " + paths.checkpoint() + ": " + e.getMessage());
            }
            LOG.info("Unprepared claim {}", ref);
        }
        return Optional.empty();
    }

    /**
     * What Prepare would have written for a claim the checkpoint does not know (it was lost, or the claim was
     * never prepared): its specs by name, and its metadata directory unless a prepared claim owns that one.
     */
    private List<Path> filesByName(ClaimRef ref) {
        try {
            checkRef(ref);
        } catch (ClaimError e) {
            return List.of();
        }
        List<Path> files = new ArrayList<>();
        files.add(paths.claimSpec(ref.uid()));
        String prefix = paths.metadataSpecPrefix(ref.uid());
        if (Files.isDirectory(paths.cdiDir())) {
            try (DirectoryStream<Path> specs = Files.newDirectoryStream(paths.cdiDir(), prefix + "*.json")) {
                specs.forEach(files::add);
            } catch (IOException e) {
                LOG.warn("Cannot list {} for the metadata specs of claim {}: {}", paths.cdiDir(), ref, e.toString());
            }
        }
        Path metadataDir = paths.metadataDir(ref);
        if (prepared.values().stream().noneMatch(p -> p.files().contains(metadataDir))) {
            files.add(metadataDir);
        }
        return files;
    }

    private static void checkRef(ClaimRef ref) throws ClaimError {
        if (!UID.matcher(ref.uid()).matches()) {
            throw new ClaimError("claim UID \"" + Printable.of(ref.uid()) + "\" is not a UID");
        }
        if (!LABEL.matcher(ref.namespace()).matches()) {
            throw new ClaimError("claim namespace \"" + Printable.of(ref.namespace()) + "\" is not a DNS label");
        }
        if (!SUBDOMAIN.matcher(ref.name()).matches() || ref.name().contains("..")) {
            throw new ClaimError("claim name \"" + Printable.of(ref.name()) + "\" is not a DNS subdomain");
        }
    }

    private static void checkRequest(String request) throws ClaimError {
        String[] parts = request.split("/", -1);
        if (parts.length > 2 || !LABEL.matcher(parts[0]).matches()
                || (parts.length == 2 && !LABEL.matcher(parts[1]).matches())) {
            throw new ClaimError("request \"" + Printable.of(request) + "\" is not a DNS label or label/label");
        }
    }

}
