package dev.vgpu.dra;

import dev.vgpu.attach.Handover;
import dev.vgpu.attach.Handovers;
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
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Prepare or Unprepare call's work (docs/DRA.md §2, §5), on plain values: the claims the owner holds, the
 * claims already read, the snapshot; answered with the claims held afterwards and one outcome per claim. Checks each
 * claim ({@link #needs}: this driver's results, at most {@link DraLimits#resultsPerClaim}, this node's pool, devices
 * advertised and not held by another claim; a result with admin access is never held nor refused for a hold),
 * re-checks the devices with {@link Handovers} (the nodes Allocate hands out for the same devices,
 * {@link Handovers#FOR_KUBEVIRT}: iommufd ones where the host has them), writes the claim's files
 * ({@link ClaimFiles}) and the checkpoint.
 *
 * <p>Threads: runs on the plugin's claim-files lane, one call at a time (the owner hands it the next call once it
 * has taken the answer of the last), so the files and the checkpoint are written by one call at a time; it holds no
 * state of its own. Blocking: sysfs reads and local file writes, never the API server.
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
    private final DraLimits limits;
    private final ClaimFiles files;

    /**
     * @param bridged which resources an extended-resource claim gets the device plugin's environment for
     */
    ClaimPreparer(PluginPaths paths, String pool, Handovers handovers, DraLimits limits,
                  java.util.function.Predicate<dev.vgpu.core.ResourceName> bridged) {
        this.paths = paths;
        this.pool = pool;
        this.handovers = handovers;
        this.limits = limits;
        this.files = new ClaimFiles(paths, bridged);
    }

    /**
     * What a call left behind.
     *
     * @param claims   every prepared claim by UID afterwards, in checkpoint order
     * @param outcomes per distinct UID of the call, in call order: empty when done, else why not
     * @param devices  per UID of a claim prepared by this call (or repeated), its devices by pool name, for the log
     */
    record Result(Map<String, PreparedClaim> claims, Map<String, Optional<String>> outcomes,
                  Map<String, List<PreparedDevice>> devices) {
        Result {
            claims = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(claims));
            outcomes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(outcomes));
            devices = Map.copyOf(devices);
        }
    }

    /** Why a claim cannot be prepared; an answer, so without a stack trace. */
    private static final class ClaimError extends Exception {
        ClaimError(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Prepares every distinct claim of the call: a claim prepared already is answered as before (its devices are not
     * checked again: a VM may run on them), any other from what {@code reads} holds for it.
     */
    Result prepare(List<ClaimRef> call, Map<String, ClaimReader.Answer> reads, Snapshot snapshot,
                   Map<String, PreparedClaim> held) {
        Map<String, PreparedClaim> claims = new LinkedHashMap<>(held);
        Map<String, Optional<String>> outcomes = new LinkedHashMap<>();
        Map<String, List<PreparedDevice>> devices = new LinkedHashMap<>();
        List<PreparedClaim> written = new ArrayList<>();
        for (ClaimRef ref : call) {
            if (outcomes.containsKey(ref.uid())) {
                continue;
            }
            try {
                PreparedClaim done = claims.get(ref.uid());
                if (done == null) {
                    done = prepare(ref, reads.get(ref.uid()), snapshot, claims);
                    if (!done.devices().isEmpty()) {
                        // A claim without devices of this driver has nothing to remember.
                        claims.put(ref.uid(), done);
                        written.add(done);
                    }
                }
                outcomes.put(ref.uid(), Optional.empty());
                devices.put(ref.uid(), done.devices());
            } catch (ClaimError e) {
                outcomes.put(ref.uid(), Optional.of(e.getMessage()));
            }
        }
        if (!written.isEmpty()) {
            try {
                Checkpoint.save(paths.checkpoint(), claims.values());
            } catch (IOException e) {
                // Nothing of these claims stays: the kubelet retries them.
                String error = "cannot write the checkpoint " + paths.checkpoint() + ": " + Printable.of(
                        e.getMessage(), 200);
                for (PreparedClaim claim : written) {
                    ClaimFiles.deleteQuietly(claim.files());
                    claims.remove(claim.claim().uid());
                    devices.remove(claim.claim().uid());
                    outcomes.put(claim.claim().uid(), Optional.of(error));
                }
            }
        }
        return new Result(claims, outcomes, devices);
    }

    /**
     * Unprepares every distinct claim of the call: deletes what Prepare wrote (a claim the checkpoint does not know:
     * its files by their names), then writes the checkpoint without them.
     */
    Result unprepare(List<ClaimRef> call, Map<String, PreparedClaim> held) {
        Map<String, PreparedClaim> claims = new LinkedHashMap<>(held);
        Map<String, Optional<String>> outcomes = new LinkedHashMap<>();
        List<PreparedClaim> removed = new ArrayList<>();
        for (ClaimRef ref : call) {
            if (outcomes.containsKey(ref.uid())) {
                continue;
            }
            PreparedClaim claim = claims.get(ref.uid());
            List<Path> written = claim != null ? claim.files() : filesByName(ref, claims);
            try {
                for (Path file : written) {
                    if (paths.mayHold(file)) {
                        AtomicFiles.delete(file);
                    }
                }
                if (claim != null) {
                    claims.remove(ref.uid());
                    removed.add(claim);
                }
                outcomes.put(ref.uid(), Optional.empty());
            } catch (IOException e) {
                outcomes.put(ref.uid(), Optional.of("cannot delete the files of claim " + ref + ": "
                        + Printable.of(e.toString(), 200)));
            }
        }
        if (!removed.isEmpty()) {
            try {
                Checkpoint.save(paths.checkpoint(), claims.values());
            } catch (IOException e) {
                String error = "cannot write the checkpoint " + paths.checkpoint() + ": " + Printable.of(
                        e.getMessage(), 200);
                for (PreparedClaim claim : removed) {
                    // Still held: its files are gone, and a repeated Unprepare removes it then.
                    claims.put(claim.claim().uid(), claim);
                    outcomes.put(claim.claim().uid(), Optional.of(error));
                }
            }
        }
        return new Result(claims, outcomes, Map.of());
    }

    private PreparedClaim prepare(ClaimRef ref, ClaimReader.Answer read, Snapshot snapshot,
                                  Map<String, PreparedClaim> claims) throws ClaimError {
        checkRef(ref);
        AllocatedClaim claim = allocated(ref, read);
        List<AllocatedDevice> ours = claim.results().stream()
                .filter(r -> r.driver().equals(paths.driver().value())).toList();
        List<Device> devices = needs(claim, ours, snapshot, claims);
        if (devices.isEmpty()) {
            return new PreparedClaim(ref, List.of(), List.of());
        }
        Handover handover = handovers.check(snapshot, devices);
        if (handover instanceof Handover.Refused refused) {
            throw new ClaimError(refused.reason());
        }
        try {
            return files.write(files.plan(claim, ours, (Handover.Granted) handover));
        } catch (IOException e) {
            throw new ClaimError("cannot write the CDI spec or device metadata of claim " + ref + ": "
                    + Printable.of(e.getMessage(), 200));
        }
    }

    /**
     * What a claim needs: the snapshot's device for each of this driver's results, checked without touching the
     * host (how many, which pool, advertised, not held by another claim). Pure.
     */
    private List<Device> needs(AllocatedClaim claim, List<AllocatedDevice> ours, Snapshot snapshot,
                               Map<String, PreparedClaim> claims) throws ClaimError {
        if (ours.size() > limits.resultsPerClaim()) {
            throw new ClaimError("claim " + claim.claim() + " has " + ours.size() + " allocation results of driver "
                    + paths.driver() + ", at most " + limits.resultsPerClaim() + " (the API's bound) are prepared");
        }
        Map<String, Device> byName = DeviceNames.index(snapshot);
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
            // An admin-access result neither takes the device from its owner nor waits for it; an ordinary one is
            // refused only by another claim's ordinary hold (an admin-access claim holds nothing).
            for (PreparedClaim other : result.adminAccess() ? List.<PreparedClaim>of() : claims.values()) {
                if (other.holds(pool, result.device())) {
                    throw new ClaimError("device " + result.device() + " is already prepared for claim "
                            + other.claim());
                }
            }
            if (!devices.contains(device)) {
                devices.add(device);
            }
        }
        return devices;
    }

    private static AllocatedClaim allocated(ClaimRef ref, ClaimReader.Answer answer) throws ClaimError {
        if (answer == null) {
            throw new ClaimError("claim " + ref + " was not read: the call's time ran out first, or the claim was"
                    + " unprepared while the call waited; the kubelet retries it");
        }
        if (answer instanceof ClaimReader.Unavailable unavailable) {
            throw new ClaimError(Printable.of(unavailable.reason(), 1_000));
        }
        AllocatedClaim claim = ((ClaimReader.Allocated) answer).claim();
        if (!claim.claim().equals(ref)) {
            throw new ClaimError("claim " + ref.namespace() + "/" + ref.name() + " read as " + claim.claim()
                    + ", not the claim the kubelet asked for (" + ref + ")");
        }
        Optional<String> podClaimName = claim.podClaimName();
        if (podClaimName.isPresent() && !LABEL.matcher(podClaimName.get()).matches()) {
            throw new ClaimError("claim " + ref + " has a pod claim name that is not a DNS label: \""
                    + Printable.of(podClaimName.get()) + "\"");
        }
        return claim;
    }

    /**
     * What Prepare would have written for a claim the checkpoint does not know (it was lost, or the claim was
     * never prepared): its specs by name, and its metadata directory unless a prepared claim owns that one.
     */
    private List<Path> filesByName(ClaimRef ref, Map<String, PreparedClaim> claims) {
        try {
            checkRef(ref);
        } catch (ClaimError e) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        out.add(paths.claimSpec(ref.uid()));
        String prefix = paths.metadataSpecPrefix(ref.uid());
        if (Files.isDirectory(paths.cdiDir())) {
            try (DirectoryStream<Path> specs = Files.newDirectoryStream(paths.cdiDir(), prefix + "*.json")) {
                specs.forEach(out::add);
            } catch (IOException e) {
                LOG.warn("Cannot list {} for the metadata specs of claim {}: {}", paths.cdiDir(), ref,
                        Printable.of(e.toString(), 200));
            }
        }
        Path metadataDir = paths.metadataDir(ref);
        if (claims.values().stream().noneMatch(p -> p.files().contains(metadataDir))) {
            out.add(metadataDir);
        }
        return out;
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
