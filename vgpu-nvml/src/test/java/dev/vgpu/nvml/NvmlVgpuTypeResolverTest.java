package dev.vgpu.nvml;

import static dev.vgpu.nvml.NvmlStub.GPU0;
import static dev.vgpu.nvml.NvmlStub.GPU1;
import static dev.vgpu.nvml.NvmlStub.GPU2_MANY_TYPES;
import static dev.vgpu.nvml.NvmlStub.GPU3_NO_VGPU;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** vGPU type names per physical GPU from the stub NVML, through the real JNA calls. */
class NvmlVgpuTypeResolverTest {

    private static final String SUPPORTED = "nvmlDeviceGetSupportedVgpus";
    private static final String BY_BUS_ID = "nvmlDeviceGetHandleByPciBusId_v2";
    private static final String NAME = "nvmlVgpuTypeGetName";

    private final NvmlStub.Control stub = NvmlStub.control();
    private Nvml nvml;

    @BeforeEach
    void open() {
        stub.stub_reset();
        nvml = Nvml.open(Optional.of(NvmlStub.library()));
        assertThat(nvml.available()).isTrue();
    }

    @AfterEach
    void close() {
        nvml.close();
        assertThat(stub.stub_init_refcount()).isZero();
        NvmlStub.assertNoMisuse(stub);
    }

    static Stream<Arguments> cards() {
        return Stream.of(
                Arguments.of(GPU0, Map.of(1414L, "NVIDIA H200X-1-18C", 1428L, "NVIDIA H200X-141C")),
                Arguments.of(GPU1, Map.of(1145L, "NVIDIA L40S-1B", 1414L, "NVIDIA L40S-24Q", 1428L, "NVIDIA L40S-48Q")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cards")
    void namesEverySupportedTypeOfThePhysicalGpu(PciAddress pf, Map<Long, String> expected) {
        assertThat(nvml.vgpuTypeResolver().supportedTypes(pf)).isEqualTo(VgpuTypeNames.of(expected));
    }

    @Test
    void overlappingTypeIdsAreResolvedOnlyFromTheirOwnCard() {
        VgpuTypeResolver resolver = nvml.vgpuTypeResolver();

        VgpuTypeNames first = resolver.supportedTypes(GPU0);
        VgpuTypeNames second = resolver.supportedTypes(GPU1);
        VgpuTypeNames firstAgain = resolver.supportedTypes(GPU0);

        assertThat(first.name(1414)).contains("NVIDIA H200X-1-18C");
        assertThat(second.name(1414)).contains("NVIDIA L40S-24Q");
        assertThat(first.name(1145)).as("an id only the other card supports").isEmpty();
        assertThat(firstAgain).isEqualTo(first);
    }

    @Test
    void listLongerThanTheFirstBufferTakesOneInsufficientSizeRetry() {
        VgpuTypeNames answer = nvml.vgpuTypeResolver().supportedTypes(GPU2_MANY_TYPES);

        assertThat(answer).isInstanceOfSatisfying(VgpuTypeNames.Answered.class,
                answered -> assertThat(answered.names()).hasSize(40).containsKeys(3000L, 3039L));
        assertThat(answer.name(3001)).contains("NVIDIA RTX Pro 6000 Blackwell DC-2-4Q");
        assertThat(answer.name(3039)).as("63 characters fill the 64-byte buffer")
                .contains("NVIDIA RTX Pro 6000 Blackwell Server Edition DC-4-96Q-LONGNAME1");
        assertThat(stub.stub_calls(SUPPORTED, 2)).isEqualTo(2);
        assertThat(stub.stub_calls(NAME, 2)).isEqualTo(40);
    }

    @Test
    void listThatFitsTakesOneCall() {
        nvml.vgpuTypeResolver().supportedTypes(GPU1);

        assertThat(stub.stub_calls(SUPPORTED, 1)).isEqualTo(1);
    }

    @Test
    void gpuWithoutVgpuIsUnavailableNotFailedWithTheNvmlErrorName() {
        VgpuTypeNames answer = nvml.vgpuTypeResolver().supportedTypes(GPU3_NO_VGPU);

        assertThat(answer).as("a lasting property of the card, not an error of this moment").isEqualTo(
                VgpuTypeNames.unavailable(
                        "NVML_ERROR_NOT_SUPPORTED from nvmlDeviceGetSupportedVgpus(0000:81:00.0): Not Supported"));
    }

    @Test
    void physicalFunctionNvmlDoesNotKnowIsAFailedAnswer() {
        VgpuTypeNames answer = nvml.vgpuTypeResolver().supportedTypes(PciAddress.parse("0000:99:00.0"));

        assertThat(answer).isEqualTo(VgpuTypeNames.failed(
                "NVML_ERROR_NOT_FOUND from nvmlDeviceGetHandleByPciBusId_v2(0000:99:00.0): Not Found"));
    }

    @Test
    void typeIdOutsideTheCardsListIsAnAnsweredUnknownNotAnError() {
        VgpuTypeNames answer = nvml.vgpuTypeResolver().supportedTypes(GPU0);

        assertThat(answer).isInstanceOf(VgpuTypeNames.Answered.class);
        assertThat(answer.name(1145)).as("card 1 supports 1145, card 0 does not").isEmpty();
    }

    @ParameterizedTest(name = "card {0} lost {1} times")
    @CsvSource({"0, 1", "1, 1", "1, 3"})
    void gpuLostFailsAsManyAnswersAsLookupsFailedThenAnswersAgain(int card, int times) {
        PciAddress lost = card == 0 ? GPU0 : GPU1;
        PciAddress other = card == 0 ? GPU1 : GPU0;
        VgpuTypeResolver resolver = nvml.vgpuTypeResolver();
        VgpuTypeNames healthy = resolver.supportedTypes(lost);
        stub.stub_fail_bus_id_lookups(card, NvmlStub.GPU_IS_LOST, times);

        assertThat(resolver.supportedTypes(other)).as("another card").isEqualTo(resolver.supportedTypes(other));
        assertThat(resolver.supportedTypes(other)).isInstanceOf(VgpuTypeNames.Answered.class);
        for (int i = 0; i < times; i++) {
            assertThat(resolver.supportedTypes(lost)).as("ask %d", i).isEqualTo(VgpuTypeNames.failed(String.format(
                    "NVML_ERROR_GPU_IS_LOST from nvmlDeviceGetHandleByPciBusId_v2(%s): GPU is lost", lost)));
        }
        assertThat(resolver.supportedTypes(lost)).isEqualTo(healthy);
        assertThat(healthy).isInstanceOfSatisfying(VgpuTypeNames.Answered.class,
                answered -> assertThat(answered.names()).isNotEmpty());
    }

    @Test
    void memoizedPerScanEachPhysicalGpuIsAskedOnce() {
        List<PciAddress> parentsOfVfs = List.of(GPU0, GPU0, GPU1, GPU0, GPU1, GPU3_NO_VGPU, GPU3_NO_VGPU);

        for (int scan = 1; scan <= 2; scan++) {
            VgpuTypeResolver perScan = VgpuTypeResolver.memoizing(nvml.vgpuTypeResolver());
            for (PciAddress pf : parentsOfVfs) {
                perScan.supportedTypes(pf);
            }
            for (int device = 0; device < 4; device++) {
                long expected = device == 2 ? 0 : scan;
                assertThat(stub.stub_calls(BY_BUS_ID, device)).as("handle lookups of device %d", device).isEqualTo(expected);
                assertThat(stub.stub_calls(SUPPORTED, device)).as("type lists of device %d", device).isEqualTo(expected);
            }
            assertThat(stub.stub_calls(NAME, 0)).isEqualTo(2L * scan);
            assertThat(stub.stub_calls(NAME, 1)).isEqualTo(3L * scan);
        }
    }

    @Test
    void closedNvmlAnswersUninitializedWithoutCallingIt() {
        VgpuTypeResolver resolver = nvml.vgpuTypeResolver();
        nvml.close();

        VgpuTypeNames answer = resolver.supportedTypes(GPU0);

        assertThat(answer).isEqualTo(VgpuTypeNames.unavailable("NVML_ERROR_UNINITIALIZED: NVML has been closed"));
        assertThat(stub.stub_calls(BY_BUS_ID, -1)).isZero();
    }

    @Test
    void closeRacingWithResolversNeverCallsNvmlAfterShutdown() throws Exception {
        nvml.close();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int iteration = 0; iteration < 40; iteration++) {
                Nvml racing = Nvml.open(Optional.of(NvmlStub.library()));
                VgpuTypeResolver resolver = racing.vgpuTypeResolver();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<List<VgpuTypeNames>>> workers = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    PciAddress pf = w % 2 == 0 ? GPU0 : GPU1;
                    workers.add(pool.submit(() -> {
                        go.await();
                        List<VgpuTypeNames> answers = new ArrayList<>();
                        for (int i = 0; i < 25; i++) {
                            answers.add(resolver.supportedTypes(pf));
                        }
                        return answers;
                    }));
                }
                go.countDown();
                racing.close();
                for (Future<List<VgpuTypeNames>> worker : workers) {
                    for (VgpuTypeNames answer : worker.get(60, TimeUnit.SECONDS)) {
                        assertThat(answer instanceof VgpuTypeNames.Answered answered ? answered.names().size()
                                : answer instanceof VgpuTypeNames.Unavailable unavailable ? unavailable.reason()
                                : ((VgpuTypeNames.Failed) answer).reason())
                                .isIn(2, 3, "NVML_ERROR_UNINITIALIZED: NVML has been closed",
                                        "NVML_ERROR_UNINITIALIZED from Nvml.lease: NVML has been closed");
                    }
                }
                assertThat(stub.stub_init_refcount()).as("iteration %d", iteration).isZero();
                assertThat(NvmlStub.calls(stub, "nvmlShutdown")).isEqualTo(iteration + 2L);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
