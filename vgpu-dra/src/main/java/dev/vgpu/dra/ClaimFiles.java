package dev.vgpu.dra;

import dev.vgpu.attach.DeviceNode;
import dev.vgpu.attach.HandedDevice;
import dev.vgpu.attach.Handover;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * metadata file with the CDI spec that mounts it. Used by {@link ClaimPreparer} on the claims thread only.
 */
final class ClaimFiles {

    private static final Logger LOG = LoggerFactory.getLogger(ClaimFiles.class);

    private final PluginPaths paths;

    ClaimFiles(PluginPaths paths) {
        this.paths = paths;
    }

    /**
     * Writes the claim spec, and per base request the metadata file and its mount spec; answers the devices with
     * their CDI ids (the metadata id on the first device of each request). On failure deletes what it wrote.
     */
    PreparedClaim write(AllocatedClaim claim, List<AllocatedDevice> ours, Handover.Granted granted)
            throws IOException {
        String uid = claim.claim().uid();
        List<Path> files = new ArrayList<>();
        try {
            Set<DeviceNode> own = new HashSet<>();
            Map<String, CdiSpecs.SpecDevice> specDevices = new LinkedHashMap<>();
            Map<String, List<DeviceMetadata.Entry>> byBase = new LinkedHashMap<>();
            for (AllocatedDevice result : ours) {
                HandedDevice device = handedFor(result, granted);
                own.addAll(device.nodes());
                specDevices.putIfAbsent(result.device(), new CdiSpecs.SpecDevice(
                        CdiSpecs.deviceName(uid, result.device()), device.nodes()));
                byBase.computeIfAbsent(result.baseRequest(), b -> new ArrayList<>())
                        .add(new DeviceMetadata.Entry(result, device));
            }
            List<DeviceNode> shared = granted.nodes().stream().filter(n -> !own.contains(n)).toList();
            Path spec = paths.claimSpec(uid);
            files.add(spec);
            AtomicFiles.write(spec, CdiSpecs.claimSpec(paths.driver(), List.copyOf(specDevices.values()), shared));
            Path metadataDir = paths.metadataDir(claim.claim());
            files.add(metadataDir);
            List<PreparedDevice> answer = new ArrayList<>();
            for (Map.Entry<String, List<DeviceMetadata.Entry>> base : byBase.entrySet()) {
                Path file = metadataDir.resolve(base.getKey()).resolve("metadata.json");
                AtomicFiles.write(file, DeviceMetadata.stream(paths.driver(), claim, base.getValue()));
                Path mount = paths.metadataSpec(uid, base.getKey());
                files.add(mount);
                AtomicFiles.write(mount, CdiSpecs.metadataSpec(paths.driver(), uid, base.getKey(), file.toString(),
                        DeviceMetadata.containerPath(paths.driver(), claim, base.getKey())));
                boolean first = true;
                for (DeviceMetadata.Entry entry : base.getValue()) {
                    List<String> ids = new ArrayList<>();
                    ids.add(CdiSpecs.claimId(paths.driver(), uid, entry.allocated().device()));
                    if (first) {
                        ids.add(CdiSpecs.metadataId(paths.driver(), uid, base.getKey()));
                        first = false;
                    }
                    answer.add(new PreparedDevice(List.of(base.getKey()), entry.allocated().pool(),
                            entry.allocated().device(), ids));
                }
            }
            return new PreparedClaim(claim.claim(), answer, files);
        } catch (IOException | RuntimeException e) {
            deleteQuietly(files);
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
                LOG.warn("Cannot delete {}: {}", file, e.toString());
            }
        }
    }
}
