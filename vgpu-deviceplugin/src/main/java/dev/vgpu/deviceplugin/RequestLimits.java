package dev.vgpu.deviceplugin;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerPreferredAllocationRequest;
import dev.vgpu.kubelet.api.v1beta1.PreferredAllocationRequest;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The size limits of Allocate and GetPreferredAllocation (README, "Allocate"), checked before any other work so
 * that one oversized request costs a count, not the heap. A request over a limit is refused with
 * {@code INVALID_ARGUMENT} naming the limit. A pod asks for a handful of devices; a node has at most a few hundred
 * of one resource (8 GPUs with 48 VFs each is 384), so the limits sit far above real requests.
 *
 * <p>Also the one place that turns client ids into text for logs: counts and a short, escaped sample
 * ({@link Printable}), never every id. Stateless.
 */
final class RequestLimits {

    /** Container requests in one Allocate or GetPreferredAllocation. */
    static final int MAX_CONTAINERS = 64;
    /** Device ids in one container request of Allocate, and the largest preferred {@code allocation_size}. */
    static final int MAX_IDS_PER_CONTAINER = 256;
    /** Device ids in one Allocate, all containers together. */
    static final int MAX_TOTAL_IDS = 1024;
    /** Available plus must-include ids in one container request of GetPreferredAllocation. */
    static final int MAX_OFFERED_IDS = 4096;
    /** Ids a log line shows before it says how many more there are. */
    static final int LOGGED_IDS = 8;

    private RequestLimits() {
    }

    /** Refuses an Allocate with too many containers or ids. */
    static void check(AllocateRequest request) throws StatusException {
        int containers = request.getContainerRequestsCount();
        if (containers > MAX_CONTAINERS) {
            throw invalid("Allocate request has " + containers + " container requests, more than the limit of "
                    + MAX_CONTAINERS);
        }
        int total = 0;
        for (ContainerAllocateRequest container : request.getContainerRequestsList()) {
            int ids = container.getDevicesIdsCount();
            if (ids > MAX_IDS_PER_CONTAINER) {
                throw invalid("Allocate container request lists " + ids + " device ids, more than the limit of "
                        + MAX_IDS_PER_CONTAINER + " per container");
            }
            total += ids;
        }
        if (total > MAX_TOTAL_IDS) {
            throw invalid("Allocate request lists " + total + " device ids, more than the limit of " + MAX_TOTAL_IDS
                    + " per request");
        }
    }

    /** Refuses a GetPreferredAllocation with too many containers, ids or an allocation size out of range. */
    static void check(PreferredAllocationRequest request) throws StatusException {
        int containers = request.getContainerRequestsCount();
        if (containers > MAX_CONTAINERS) {
            throw invalid("GetPreferredAllocation request has " + containers
                    + " container requests, more than the limit of " + MAX_CONTAINERS);
        }
        for (ContainerPreferredAllocationRequest container : request.getContainerRequestsList()) {
            int offered = container.getAvailableDeviceIDsCount() + container.getMustIncludeDeviceIDsCount();
            if (offered > MAX_OFFERED_IDS) {
                throw invalid("GetPreferredAllocation container request offers " + offered
                        + " available and must-include ids, more than the limit of " + MAX_OFFERED_IDS);
            }
            int size = container.getAllocationSize();
            if (size < 0 || size > MAX_IDS_PER_CONTAINER) {
                throw invalid("GetPreferredAllocation allocation_size " + size + " is outside 0.."
                        + MAX_IDS_PER_CONTAINER);
            }
        }
    }

    /** The ids of an Allocate for a log line: how many, in how many containers, and the first few, escaped. */
    static String describe(AllocateRequest request) {
        List<String> ids = request.getContainerRequestsList().stream()
                .flatMap(c -> c.getDevicesIdsList().stream()).toList();
        return ids.size() + (ids.size() == 1 ? " device" : " devices") + " in "
                + request.getContainerRequestsCount() + (request.getContainerRequestsCount() == 1 ? " container"
                : " containers") + " (" + sample(ids) + ")";
    }

    /** The first {@value #LOGGED_IDS} ids, escaped and comma-joined, then how many were left out. */
    static String sample(List<String> ids) {
        String shown = ids.stream().limit(LOGGED_IDS).map(Printable::of).collect(Collectors.joining(", "));
        return ids.size() > LOGGED_IDS ? shown + " and " + (ids.size() - LOGGED_IDS) + " more" : shown;
    }

    private static StatusException invalid(String description) {
        return Status.INVALID_ARGUMENT.withDescription(description).asException();
    }
}
