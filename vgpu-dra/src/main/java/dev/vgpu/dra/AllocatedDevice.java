package dev.vgpu.dra;

import java.util.Objects;

/**
 * One entry of a claim's {@code status.allocation.devices.results} (docs/DRA.md §3).
 *
 * @param request the request it was allocated for: {@code req}, or {@code req/sub} for a subrequest
 * @param driver  the driver that serves it; the plugin keeps only its own
 * @param pool    the pool the device was published in (this driver's pool is the node name)
 * @param device  the device's name in the pool, e.g. {@code pci-0000-1b-00-4} or {@code mdev-<uuid>}
 * @param adminAccess {@code adminAccess: true} on the result: the scheduler gave the device to this claim beside its
 *                    ordinary allocation (a monitoring pod's claim), so it neither takes the device from the claim
 *                    that holds it nor keeps another claim from it
 */
public record AllocatedDevice(String request, String driver, String pool, String device, boolean adminAccess) {

    /** An ordinary result (no admin access). */
    public AllocatedDevice(String request, String driver, String pool, String device) {
        this(request, driver, pool, device, false);
    }

    /** Checks that every field is there. */
    public AllocatedDevice {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(device, "device");
    }

    /** The request without a {@code /sub} part: the name the kubelet and the metadata directory use. */
    public String baseRequest() {
        int slash = request.indexOf('/');
        return slash < 0 ? request : request.substring(0, slash);
    }
}
