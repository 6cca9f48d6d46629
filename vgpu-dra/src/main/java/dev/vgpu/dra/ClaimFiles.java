package dev.vgpu.dra;

import dev.vgpu.attach.DeviceNode;
import dev.vgpu.attach.HandedDevice;
import dev.vgpu.attach.Handover;
import dev.vgpu.attach.KubeVirtEnv;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of one prepared claim (docs/DRA.md §5, §6): its CDI spec, in which each {@link HandedDevice}'s own nodes
 * are its device's and nodes of the whole handover (EGM) the spec-level edits, and per base request the KEP-5304
 * metadata file with the CDI spec that mounts it. {@link #plan} computes them (pure: what the claim needs on disk),
 * {@link #write} writes them. Used by {@link ClaimPreparer} on the claim-files lane only.
 */
final class ClaimFiles {

    private static final Logger LOG = LoggerFactory.getLogger(ClaimFiles.class);

    private final PluginPaths paths;
    /** Which resources an extended-resource claim gets the device plugin's environment for. */
    private final java.util.function.Predicate<dev.vgpu.core.ResourceName> bridged;

    ClaimFiles(PluginPaths paths, java.util.function.Predicate<dev.vgpu.core.ResourceName> bridged) {
        this.paths = paths;
        this.bridged = bridged;
    }

    /** One file to write. */
    record Text(Path path, String content) {
    }

    /**
     * What a claim's Prepare writes and answers.
     *
     * @param claim   the claim
     * @param files   the files, in the order they are written (the claim spec, then per request its metadata file
     *                and the spec that mounts it)
     * @param owned   what Unprepare deletes: the claim spec, the claim's metadata directory, the mount specs
     * @param devices the answer: the devices with their CDI ids (the metadata id on the first device of each request)
     */
    record Plan(ClaimRef claim, List<Text> files, List<Path> owned, List<PreparedDevice> devices) {
        Plan {
            files = List.copyOf(files);
            owned = List.copyOf(owned);
            devices = List.copyOf(devices);
        }
    }

    /**
     * What the claim needs on disk for the devices the handover granted. Pure. An extended-resource claim's first
     * device of each request also sets the device plugin's environment for that request's devices
     * ({@link KubeVirtEnv}: the container that asked for {@code nvidia.com/<NAME>} is the one that gets the request's
     * CDI ids, and a request is one container's one resource).
     */
    Plan plan(AllocatedClaim claim, List<AllocatedDevice> ours, Handover.Granted granted) {
        String uid = claim.claim().uid();
        Set<DeviceNode> own = new HashSet<>();
        Map<String, HandedDevice> handed = new LinkedHashMap<>();
        Map<String, List<DeviceMetadata.Entry>> byBase = new LinkedHashMap<>();
        for (AllocatedDevice result : ours) {
            HandedDevice device = handedFor(result, granted);
            own.addAll(device.nodes());
            handed.putIfAbsent(result.device(), device);
            byBase.computeIfAbsent(result.baseRequest(), b -> new ArrayList<>())
                    .add(new DeviceMetadata.Entry(result, device));
        }
        Map<String, Map<String, String>> envOf = new HashMap<>();
        if (claim.extendedResource()) {
            byBase.values().forEach(entries -> envOf.put(entries.get(0).allocated().device(), KubeVirtEnv.of(
                    entries.stream().map(e -> e.handed().device()).filter(d -> bridged.test(d.resource()))
                            .toList())));
        }
        List<CdiSpecs.SpecDevice> specDevices = new ArrayList<>();
        handed.forEach((name, device) -> specDevices.add(new CdiSpecs.SpecDevice(CdiSpecs.deviceName(uid, name),
                device.nodes(), envOf.getOrDefault(name, Map.of()))));
        List<DeviceNode> shared = granted.nodes().stream().filter(n -> !own.contains(n)).toList();
        List<Text> files = new ArrayList<>();
        List<Path> owned = new ArrayList<>();
        Path spec = paths.claimSpec(uid);
        files.add(new Text(spec, CdiSpecs.claimSpec(paths.driver(), specDevices, shared)));
        owned.add(spec);
        Path metadataDir = paths.metadataDir(claim.claim());
        owned.add(metadataDir);
        List<PreparedDevice> answer = new ArrayList<>();
        for (Map.Entry<String, List<DeviceMetadata.Entry>> base : byBase.entrySet()) {
            Path file = metadataDir.resolve(base.getKey()).resolve("metadata.json");
            files.add(new Text(file, DeviceMetadata.stream(paths.driver(), claim, base.getValue())));
            Path mount = paths.metadataSpec(uid, base.getKey());
            files.add(new Text(mount, CdiSpecs.metadataSpec(paths.driver(), uid, base.getKey(), file.toString(),
                    DeviceMetadata.containerPath(paths.driver(), claim, base.getKey()))));
            owned.add(mount);
            boolean first = true;
            for (DeviceMetadata.Entry entry : base.getValue()) {
                List<String> ids = new ArrayList<>();
                ids.add(CdiSpecs.claimId(paths.driver(), uid, entry.allocated().device()));
                if (first) {
                    ids.add(CdiSpecs.metadataId(paths.driver(), uid, base.getKey()));
                    first = false;
                }
                answer.add(new PreparedDevice(List.of(base.getKey()), entry.allocated().pool(),
                        entry.allocated().device(), ids, entry.allocated().adminAccess()));
            }
        }
        return new Plan(claim.claim(), files, owned, answer);
    }

    /** Writes the plan's files, each atomically; on failure deletes what it wrote. */
    PreparedClaim write(Plan plan) throws IOException {
        try {
            for (Text text : plan.files()) {
                AtomicFiles.write(text.path(), text.content());
            }
            return new PreparedClaim(plan.claim(), plan.devices(), plan.owned());
        } catch (IOException | RuntimeException e) {
            deleteQuietly(plan.owned());
            throw e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
    }

    private static HandedDevice handedFor(AllocatedDevice result, Handover.Granted granted) {
        for (HandedDevice device : granted.devices()) {
            if (DeviceNames.of(device.device()).equals(result.device())) {
                return device;
            }
        }
        throw new IllegalStateException("the handover has no device " + result.device());
    }

    static void deleteQuietly(List<Path> files) {
        for (Path file : files) {
            try {
                AtomicFiles.delete(file);
            } catch (IOException e) {
                LOG.warn("Cannot delete {}: {}", file, dev.vgpu.core.internal.Printable.of(e.toString(), 200));
            }
        }
    }
}
