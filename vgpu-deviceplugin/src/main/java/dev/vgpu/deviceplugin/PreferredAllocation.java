package dev.vgpu.deviceplugin;

import dev.vgpu.core.Device;
import dev.vgpu.kubelet.api.v1beta1.ContainerPreferredAllocationRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerPreferredAllocationResponse;
import dev.vgpu.kubelet.api.v1beta1.PreferredAllocationRequest;
import dev.vgpu.kubelet.api.v1beta1.PreferredAllocationResponse;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The preferred-allocation policy: must-include devices first, then fill from one NUMA node when one node can
 * hold the whole request, else in the kubelet's order.
 *
 * <p>Candidate nodes are tried in this order: the nodes of the must-include devices as they appear, then the
 * other nodes in the order the kubelet lists them. A node qualifies when the devices already picked on it plus
 * its not yet picked available devices reach the allocation size. Devices whose NUMA node is unknown (or that
 * this plugin does not know) belong to no node. The nodes are each device's own, also for a resource whose
 * ListAndWatch withholds topology because some device lacks a node ({@link AdvertisedDevices#withholdsTopology}):
 * the kubelet then gives no NUMA hint for the resource, and keeping the devices of a request on one node still
 * costs nothing and helps the VM.
 *
 * <p>Only ids this resource advertises are ever answered: an available or must-include id it does not advertise
 * (stale kubelet state, or a hostile client's {@code ../../etc/passwd}) is left out, so the answer never holds more
 * ids than were offered. Request sizes are bounded by {@link RequestLimits}. Pure and thread-safe.
 */
final class PreferredAllocation {

    private PreferredAllocation() {
    }

    /**
     * The answer to a whole request, one container at a time, after {@link RequestLimits#check checking its size}.
     *
     * @param advertised this resource's devices by id, as the current snapshot has them
     * @throws StatusException {@code INVALID_ARGUMENT} when the request is over a limit or a container asks for
     *                         fewer devices than it must include
     */
    static PreferredAllocationResponse respond(PreferredAllocationRequest request, Map<String, Device> advertised)
            throws StatusException {
        RequestLimits.check(request);
        Function<String, OptionalInt> numaOf = id -> {
            Device device = advertised.get(id);
            return device == null ? OptionalInt.empty() : device.numaNode();
        };
        PreferredAllocationResponse.Builder out = PreferredAllocationResponse.newBuilder();
        for (ContainerPreferredAllocationRequest container : request.getContainerRequestsList()) {
            try {
                out.addContainerResponses(ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(
                        choose(container.getAvailableDeviceIDsList(), container.getMustIncludeDeviceIDsList(),
                                container.getAllocationSize(), numaOf, advertised::containsKey)));
            } catch (IllegalArgumentException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asException();
            }
        }
        return out.build();
    }

    /**
     * The preferred device ids for one container.
     *
     * @param available   the kubelet's available ids, in its order
     * @param mustInclude ids that must be part of the answer
     * @param size        the number of devices wanted
     * @param numaOf      the NUMA node of a device id, empty when unknown
     * @param advertised  whether this resource advertises an id; others are never answered
     * @throws IllegalArgumentException when there are more (advertised) must-include devices than {@code size},
     *                                  or {@code size} is negative
     */
    static List<String> choose(List<String> available, List<String> mustInclude, int size,
                               Function<String, OptionalInt> numaOf, Predicate<String> advertised) {
        if (size < 0) {
            throw new IllegalArgumentException("allocation size " + size + " is negative");
        }
        Set<String> picked = new LinkedHashSet<>();
        mustInclude.stream().filter(advertised).forEach(picked::add);
        if (picked.size() > size) {
            throw new IllegalArgumentException(picked.size() + " must-include devices ("
                    + RequestLimits.sample(List.copyOf(picked)) + ") exceed the allocation size " + size);
        }
        available = available.stream().filter(advertised).toList();
        if (picked.size() < size) {
            fillFromOneNode(available, picked, size, numaOf);
        }
        for (String id : available) {
            if (picked.size() >= size) {
                break;
            }
            picked.add(id);
        }
        return List.copyOf(picked);
    }

    private static void fillFromOneNode(List<String> available, Set<String> picked, int size,
                                        Function<String, OptionalInt> numaOf) {
        Map<Integer, List<String>> byNode = new LinkedHashMap<>();
        for (String id : available) {
            OptionalInt node = numaOf.apply(id);
            if (node.isPresent() && !picked.contains(id)) {
                List<String> bucket = byNode.computeIfAbsent(node.getAsInt(), n -> new ArrayList<>());
                if (!bucket.contains(id)) {
                    bucket.add(id);
                }
            }
        }
        Map<Integer, Integer> pickedOnNode = new LinkedHashMap<>();
        for (String id : picked) {
            OptionalInt node = numaOf.apply(id);
            if (node.isPresent()) {
                pickedOnNode.merge(node.getAsInt(), 1, Integer::sum);
            }
        }
        Set<Integer> candidates = new LinkedHashSet<>(pickedOnNode.keySet());
        candidates.addAll(byNode.keySet());
        for (int node : candidates) {
            List<String> bucket = byNode.getOrDefault(node, List.of());
            if (pickedOnNode.getOrDefault(node, 0) + bucket.size() >= size) {
                for (String id : bucket) {
                    if (picked.size() >= size) {
                        return;
                    }
                    picked.add(id);
                }
                return;
            }
        }
    }
}
