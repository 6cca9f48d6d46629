package dev.vgpu.dra;

import java.nio.file.Path;
import java.util.List;

/**
 * A claim this plugin prepared, as the checkpoint keeps it: what to answer when Prepare is repeated, which devices
 * it holds, and what to delete when it is unprepared.
 *
 * @param claim   the claim
 * @param devices the answer given
 * @param files   every file and directory Prepare wrote for it
 */
record PreparedClaim(ClaimRef claim, List<PreparedDevice> devices, List<Path> files) {

    PreparedClaim {
        devices = List.copyOf(devices);
        files = List.copyOf(files);
    }

    /**
     * Whether the claim holds this pool device: has it prepared without admin access (an admin-access claim reaches a
     * device beside its owner and holds it for no one).
     */
    boolean holds(String pool, String device) {
        return devices.stream().anyMatch(d -> !d.adminAccess() && d.pool().equals(pool) && d.device().equals(device));
    }
}
