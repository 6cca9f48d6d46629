package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.identified;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Oversized and hostile Allocate and GetPreferredAllocation requests over the real socket: refused with
 * {@code INVALID_ARGUMENT} naming the limit before any work, client text escaped and cut in every description,
 * preferred answers only with advertised ids; the plugin keeps serving afterwards.
 */
@Tag("reliability")
class HostileRequestsTest {

    private static final String GPU0 = "0000:41:00.0";
    private static final String GPU1 = "0000:42:00.0";

    @TempDir
    Path tmp;
    Harness h;

    @BeforeEach
    void host() {
        h = Harness.start(tmp);
        h.host.passthroughGpu(GPU0, 0x2335).iommuGroup(41).numa(0).create();
        h.host.passthroughGpu(GPU1, 0x2335).iommuGroup(42).numa(1).create();
        h.apply(snapshot(identified(passthrough(GPU0, 41, 0), "pci:10de:2335"),
                identified(passthrough(GPU1, 42, 1), "pci:10de:2335")));
        h.await(k -> k.streaming(H200.fullName()));
    }

    @AfterEach
    void close() {
        h.close();
    }

    @Test
    void oneHundredTwentyThousandContainersAreRefusedNamingTheLimit() {
        AllocateRequest.Builder request = AllocateRequest.newBuilder();
        ContainerAllocateRequest one = ContainerAllocateRequest.newBuilder().addDevicesIds(GPU0).build();
        for (int i = 0; i < 120_000; i++) {
            request.addContainerRequests(one);
        }

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), request.build()))
                .satisfies(invalid("120000 container requests", "limit of 64"));
        stillServes();
    }

    @Test
    void tooManyIdsPerContainerOrInTotalAreRefusedNamingTheLimit() {
        List<String> manyIds = Collections.nCopies(257, GPU0);
        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), manyIds))
                .satisfies(invalid("257 device ids", "limit of 256 per container"));

        AllocateRequest.Builder request = AllocateRequest.newBuilder();
        for (int i = 0; i < 5; i++) {
            request.addContainerRequests(ContainerAllocateRequest.newBuilder()
                    .addAllDevicesIds(Collections.nCopies(250, GPU0)));
        }
        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), request.build()))
                .satisfies(invalid("1250 device ids", "limit of 1024 per request"));
        stillServes();
    }

    @Test
    void anIdWithANewlineNeverReachesTheStatusAsASecondLine() {
        String forged = GPU0 + "\n2099-01-01 INFO Allocated everything";

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of(forged)))
                .satisfies(invalid("unknown device 0000:41:00.0\\n2099-01-01 INFO Allocated"))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                        assertThat(e.getStatus().getDescription()).doesNotContain("\n", "\r"));
    }

    @Test
    void aHugeIdIsCutInTheStatus() {
        String huge = "x".repeat(3_900_000);

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of(huge)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).hasSizeLessThan(300).contains("x…");
                });
        stillServes();
    }

    @Test
    void preferredNeverAnswersAnIdThatIsNotAdvertised() {
        List<String> answer = h.kubelet.preferred(H200.fullName(), List.of(GPU0, "0000:99:00.0", GPU1),
                List.of("../../etc/passwd"), 2);

        assertThat(answer).containsExactly(GPU0, GPU1);
        assertThat(h.kubelet.preferred(H200.fullName(), List.of(GPU1), List.of("../../etc/passwd"), 1))
                .containsExactly(GPU1);
    }

    @Test
    void preferredNeverAnswersMoreThanTheAvailableIds() {
        assertThat(h.kubelet.preferred(H200.fullName(), List.of(GPU1), List.of(), 200)).containsExactly(GPU1);
    }

    @Test
    void preferredRefusesAnAbsurdSizeOrOffer() {
        List<String> offered = new ArrayList<>(IntStream.range(0, 100_002)
                .mapToObj(i -> String.format("0000:%02x:%02x.%d", (i >> 8) & 0xff, (i >> 3) & 0x1f, i & 7)).toList());

        assertThatThrownBy(() -> h.kubelet.preferred(H200.fullName(), List.of(GPU0), List.of(), Integer.MAX_VALUE))
                .satisfies(invalid("allocation_size 2147483647", "0..256"));
        assertThatThrownBy(() -> h.kubelet.preferred(H200.fullName(), offered, List.of(), 2))
                .satisfies(invalid("100002", "limit of 4096"));
        stillServes();
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aVendorFileLinkedToDevZeroIsRefusedAndTheOtherGpuStillAllocates() throws Exception {
        Path vendor = h.host.path("sys/bus/pci/devices/" + GPU0 + "/vendor");
        Files.delete(vendor);
        Files.createSymbolicLink(vendor, Path.of("/dev/zero"));

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of(GPU0)))
                .satisfies(invalid(GPU0, "vendor is a character device"));
        assertThat(h.kubelet.allocate(H200.fullName(), List.of(GPU1)).getContainerResponsesCount()).isOne();
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aFifoAsVendorIsRefusedWithoutHangingTheCall() throws Exception {
        Path vendor = h.host.path("sys/bus/pci/devices/" + GPU0 + "/vendor");
        Files.delete(vendor);
        Process mkfifo = new ProcessBuilder("mkfifo", vendor.toString()).start();
        assertThat(mkfifo.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();

        assertThatThrownBy(() -> h.kubelet.allocate(H200.fullName(), List.of(GPU0)))
                .satisfies(invalid(GPU0, "vendor is a FIFO"));
        stillServes(GPU1);
    }

    private void stillServes() {
        stillServes(GPU0);
    }

    private void stillServes(String gpu) {
        assertThat(h.kubelet.allocate(H200.fullName(), List.of(gpu)).getContainerResponses(0).getEnvsMap())
                .isEqualTo(Map.of("PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB", gpu));
    }

    private static Consumer<Throwable> invalid(String... parts) {
        return t -> assertThat(t).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains(parts);
        });
    }
}
