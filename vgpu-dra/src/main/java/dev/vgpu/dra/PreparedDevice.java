package dev.vgpu.dra;

import java.util.List;

/**
 * One device of a prepared claim as the kubelet is answered: {@code Device} of the DRA service (docs/DRA.md §2).
 *
 * @param requestNames the base requests it serves (never empty here: KubeVirt always names the request)
 * @param pool         the pool it was allocated from
 * @param device       its name in the pool
 * @param cdiIds       its CDI device ids: the claim spec's device, and for the first device of a request the
 *                     metadata mount
 * @param adminAccess  whether it was allocated with admin access: it holds the device for no one
 */
record PreparedDevice(List<String> requestNames, String pool, String device, List<String> cdiIds,
                      boolean adminAccess) {

    PreparedDevice {
        requestNames = List.copyOf(requestNames);
        cdiIds = List.copyOf(cdiIds);
    }

    /** An ordinary device (no admin access). */
    PreparedDevice(List<String> requestNames, String pool, String device, List<String> cdiIds) {
        this(requestNames, pool, device, cdiIds, false);
    }
}
