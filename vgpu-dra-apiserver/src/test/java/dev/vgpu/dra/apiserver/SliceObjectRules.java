package dev.vgpu.dra.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** The {@code resource.k8s.io/v1} rules of docs/DRA.md §4 for the slice objects a publisher wrote, read back. */
final class SliceObjectRules {

    static final Pattern DNS_LABEL = Pattern.compile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
    static final Pattern C_IDENTIFIER = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");

    private SliceObjectRules() {
    }

    /**
     * The rules of §4 for slices as the publisher wrote them to the API server, read back as JSON: exactly one node
     * selection, the pool's fields, device and attribute limits, each attribute value with exactly one of the four
     * keys, taints, and the pool consistent across its slices.
     */
    static void assertValid(List<io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice> pool) {
        assertThat(pool).isNotEmpty();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        Set<String> names = new HashSet<>();
        for (var object : pool) {
            com.fasterxml.jackson.databind.JsonNode slice;
            try {
                slice = json.readTree(io.fabric8.kubernetes.client.utils.Serialization.asJson(object));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            assertThat(slice.path("apiVersion").asText()).isEqualTo("resource.k8s.io/v1");
            assertThat(slice.path("metadata").path("name").asText()).hasSizeLessThanOrEqualTo(253);
            com.fasterxml.jackson.databind.JsonNode spec = slice.path("spec");
            int selections = 0;
            for (String field : List.of("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")) {
                selections += spec.has(field) && !spec.get(field).isNull() ? 1 : 0;
            }
            assertThat(selections).as("exactly one node selection").isEqualTo(1);
            assertThat(spec.path("driver").asText()).hasSizeLessThanOrEqualTo(63).isNotEmpty();
            com.fasterxml.jackson.databind.JsonNode poolNode = spec.path("pool");
            assertThat(poolNode.path("name").asText()).isNotEmpty().hasSizeLessThanOrEqualTo(253);
            assertThat(poolNode.path("generation").asLong()).isEqualTo(
                    pool.get(0).getSpec().getPool().getGeneration()).isPositive();
            assertThat(poolNode.path("resourceSliceCount").asLong()).isEqualTo(pool.size());
            boolean tainted = false;
            for (com.fasterxml.jackson.databind.JsonNode device : spec.path("devices")) {
                tainted |= device.path("taints").size() > 0;
            }
            assertThat(spec.path("devices").size()).isLessThanOrEqualTo(tainted ? 64 : 128);
            for (com.fasterxml.jackson.databind.JsonNode device : spec.path("devices")) {
                String name = device.path("name").asText();
                assertThat(names.add(name)).as("unique in the pool: " + name).isTrue();
                assertThat(name).hasSizeLessThanOrEqualTo(63).matches(DNS_LABEL);
                assertThat(device.path("attributes").size()).isLessThanOrEqualTo(32);
                for (var e : device.path("attributes").properties()) {
                    String key = e.getKey();
                    int slash = key.indexOf('/');
                    assertThat(slash < 0 ? key : key.substring(slash + 1)).hasSizeLessThanOrEqualTo(32)
                            .matches(C_IDENTIFIER);
                    List<String> forms = new ArrayList<>();
                    e.getValue().properties().forEach(f -> forms.add(f.getKey()));
                    assertThat(forms).as(key).singleElement().isIn("int", "bool", "string", "version");
                    if (forms.get(0).equals("string")) {
                        // The API server counts bytes (Go's len), not characters.
                        assertThat(e.getValue().get("string").asText().getBytes(
                                java.nio.charset.StandardCharsets.UTF_8).length).as(key).isLessThanOrEqualTo(64);
                    }
                }
                assertThat(device.path("taints").size()).isLessThanOrEqualTo(16);
                for (com.fasterxml.jackson.databind.JsonNode taint : device.path("taints")) {
                    assertThat(taint.path("effect").asText()).isIn("None", "NoSchedule", "NoExecute");
                    assertThat(taint.path("key").asText()).isNotEmpty();
                }
            }
        }
    }
}
