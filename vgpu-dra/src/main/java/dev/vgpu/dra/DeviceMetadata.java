package dev.vgpu.dra;

import dev.vgpu.attach.HandedDevice;
import dev.vgpu.core.internal.JsonText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The KEP-5304 device metadata of one request of a claim, as KubeVirt's virt-launcher reads it (docs/DRA.md §5):
 * one {@code metadata.resource.k8s.io/v1alpha1} {@code DeviceMetadata} object on a line. A PCI function carries
 * {@code resource.kubernetes.io/pciBusID}, a mediated device the unqualified {@code mdevUUID} (never both: KubeVirt
 * takes {@code mdevUUID} when it is there, so a VF must not carry it).
 */
final class DeviceMetadata {

    static final String API_VERSION = "metadata.resource.k8s.io/v1alpha1";
    static final String CONTAINER_ROOT = "/var/run/kubernetes.io/dra-device-attributes";

    private DeviceMetadata() {
    }

    /** One allocated device of the request with what the handover found for it. */
    record Entry(AllocatedDevice allocated, HandedDevice handed) {
    }

    /**
     * Where the container sees the file: under {@code resourceclaimtemplates/<podClaimName>} for a claim made from a
     * template, else under {@code resourceclaims/<claimName>}.
     */
    static String containerPath(DriverName driver, AllocatedClaim claim, String baseRequest) {
        String owner = claim.podClaimName().map(p -> "resourceclaimtemplates/" + p)
                .orElse("resourceclaims/" + claim.claim().name());
        return CONTAINER_ROOT + "/" + owner + "/" + baseRequest + "/" + driver + "-metadata.json";
    }

    /** The stream for the entries of one base request, its requests (subrequests keep their full name) in order. */
    static String stream(DriverName driver, AllocatedClaim claim, List<Entry> entries) {
        Map<String, List<Object>> byRequest = new LinkedHashMap<>();
        for (Entry entry : entries) {
            Map<String, Object> device = new LinkedHashMap<>();
            device.put("driver", driver.value());
            device.put("pool", entry.allocated().pool());
            device.put("name", entry.allocated().device());
            device.put("attributes", attributes(entry.handed()));
            byRequest.computeIfAbsent(entry.allocated().request(), r -> new ArrayList<>()).add(device);
        }
        List<Object> requests = new ArrayList<>();
        byRequest.forEach((name, devices) -> {
            Map<String, Object> request = new LinkedHashMap<>();
            request.put("name", name);
            request.put("devices", devices);
            requests.add(request);
        });
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("name", claim.claim().name());
        meta.put("namespace", claim.claim().namespace());
        meta.put("uid", claim.claim().uid());
        meta.put("generation", 1);
        Map<String, Object> object = new LinkedHashMap<>();
        object.put("apiVersion", API_VERSION);
        object.put("kind", "DeviceMetadata");
        object.put("metadata", meta);
        claim.podClaimName().ifPresent(p -> object.put("podClaimName", p));
        object.put("requests", requests);
        return JsonText.write(object) + "\n";
    }

    private static Map<String, Object> attributes(HandedDevice handed) {
        Map<String, Object> attributes = new LinkedHashMap<>();
        handed.mdevUuid().ifPresent(uuid -> {
            attributes.put("type", Map.of("string", "mdev"));
            attributes.put("mdevUUID", Map.of("string", uuid));
        });
        handed.pciBusId().ifPresent(bdf -> {
            attributes.put("type", Map.of("string", handed.device().parent().isPresent() ? "vgpu" : "passthrough"));
            attributes.put("resource.kubernetes.io/pciBusID", Map.of("string", bdf.toString()));
        });
        return attributes;
    }
}
