package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Preferred allocation: must-include first, then one NUMA node that can hold the request, else kubelet order. */
class PreferredAllocationTest {

    /** a* on node 0, b* on node 1, u* unknown. */
    private static final Map<String, Integer> NUMA = Map.of("a0", 0, "a1", 0, "b0", 1, "b1", 1, "b2", 1);
    private static final Function<String, OptionalInt> NUMA_OF = id -> NUMA.containsKey(id)
            ? OptionalInt.of(NUMA.get(id)) : OptionalInt.empty();

    @ParameterizedTest(name = "available {0}, must {1}, size {2} -> {3}")
    @CsvSource(delimiter = '|', value = {
        // available           | must include | size | preferred
        "a0 b0 b1 a1           |              | 2    | a0 a1",
        "a0 b0 b1 a1 b2        |              | 3    | b0 b1 b2",
        "a0 a1 b0 b1           | b0           | 2    | b0 b1",
        "a0 a1 b0 b1 b2        | a0           | 3    | a0 b0 b1",
        "a0 b0 a1 b1           |              | 4    | a0 b0 a1 b1",
        "u1 u2 a0              |              | 2    | u1 u2",
        "a0 a1                 | x            | 2    | x a0",
        "a0 a1 b0              | a0 a0        | 1    | a0",
        "a0 a1 b0              |              | 0    | ''",
        "b0 a0                 | b1 a1        | 2    | b1 a1",
        "a0 b0                 |              | 5    | a0 b0",
    })
    void choosesPerPolicy(String available, String mustInclude, int size, String expected) {
        assertThat(PreferredAllocation.choose(ids(available), ids(mustInclude), size, NUMA_OF, id -> true))
                .containsExactlyElementsOf(ids(expected));
    }

    @ParameterizedTest(name = "advertised a*, b*: available {0}, must {1}, size {2} -> {3}")
    @CsvSource(delimiter = '|', value = {
        // available           | must include        | size | preferred
        "a0 a1                 | ../../etc/passwd    | 2    | a0 a1",
        "u1 a0 u2              |                     | 3    | a0",
        "a0 a0 a0              |                     | 3    | a0",
        "u1                    | b2                  | 2    | b2",
        "a0 b0                 | x y z               | 1    | a0",
    })
    void answersOnlyAdvertisedIdsAndNeverMoreThanOffered(String available, String mustInclude, int size,
                                                         String expected) {
        assertThat(PreferredAllocation.choose(ids(available), ids(mustInclude), size, NUMA_OF, NUMA::containsKey))
                .containsExactlyElementsOf(ids(expected));
    }

    @Test
    void moreMustIncludeDevicesThanTheSizeIsAnError() {
        assertThatThrownBy(() -> PreferredAllocation.choose(ids("a0 a1 b0"), ids("a0 a1"), 1, NUMA_OF, id -> true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceed the allocation size 1");
    }

    @Test
    void overTheSocketUsesTheSnapshotsNumaNodesAndRefusesMustIncludeAboveSize(@TempDir Path tmp) {
        try (Harness h = Harness.start(tmp)) {
            h.apply(snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 1),
                    passthrough("0000:43:00.0", 43, 1)));
            h.await(k -> k.resources().containsKey(H200.fullName()));

            assertThat(h.kubelet.preferred(H200.fullName(), List.of("0000:41:00.0", "0000:42:00.0", "0000:43:00.0"),
                    List.of(), 2)).containsExactly("0000:42:00.0", "0000:43:00.0");
            assertThatThrownBy(() -> h.kubelet.preferred(H200.fullName(), List.of("0000:41:00.0", "0000:42:00.0"),
                    List.of("0000:41:00.0", "0000:42:00.0"), 1))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        }
    }

    private static List<String> ids(String text) {
        return text == null || text.isBlank() ? List.of() : Arrays.asList(text.trim().split("\\s+"));
    }
}
