package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VgpuTypeResolverTest {

    static final PciAddress PF_A = PciAddress.parse("0000:41:00.0");
    static final PciAddress PF_B = PciAddress.parse("0000:42:00.0");

    @Test
    void noneKnowsNothingAndSaysWhy() {
        VgpuTypeNames names = VgpuTypeResolver.none().supportedTypes(PF_A);

        assertThat(names).isInstanceOfSatisfying(VgpuTypeNames.Unavailable.class,
                unavailable -> assertThat(unavailable.reason()).contains("NVML"));
        assertThat(names.name(1428)).isEmpty();
    }

    @Test
    void memoizingAsksOncePerPhysicalFunctionEvenUnderRaces() throws Exception {
        Map<PciAddress, AtomicInteger> calls = new ConcurrentHashMap<>();
        VgpuTypeResolver memo = VgpuTypeResolver.memoizing(pf -> {
            calls.computeIfAbsent(pf, k -> new AtomicInteger()).incrementAndGet();
            return VgpuTypeNames.of(Map.of(1428L, "NVIDIA H200X-141C " + pf));
        });
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 50; round++) {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<VgpuTypeNames>> answers = new ArrayList<>();
                PciAddress pf = new PciAddress(round, 0x41, 0, 0);
                for (int t = 0; t < 8; t++) {
                    answers.add(pool.submit(() -> {
                        start.await();
                        return memo.supportedTypes(pf);
                    }));
                }
                start.countDown();
                for (Future<VgpuTypeNames> answer : answers) {
                    assertThat(answer.get().name(1428)).contains("NVIDIA H200X-141C " + pf);
                }
                assertThat(calls.get(pf)).hasValue(1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void memoizingTurnsABrokenDelegateIntoUnavailable() {
        VgpuTypeResolver memo = VgpuTypeResolver.memoizing(pf -> {
            if (pf.equals(PF_A)) {
                throw new IllegalStateException("NVML_ERROR_GPU_IS_LOST");
            }
            return null;
        });

        assertThat(memo.supportedTypes(PF_A)).isInstanceOfSatisfying(VgpuTypeNames.Failed.class,
                failed -> assertThat(failed.reason()).contains("NVML_ERROR_GPU_IS_LOST"));
        assertThat(memo.supportedTypes(PF_B)).isInstanceOf(VgpuTypeNames.Failed.class);
    }

    @Test
    void aHostResolvesRelativePathsOnly() {
        Host host = Host.of(Path.of("/tmp/host"));

        assertThat(host.path("sys/bus/pci/devices")).isEqualTo(Path.of("/tmp/host/sys/bus/pci/devices"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> host.path("/sys"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(host.withVgpuTypes(VgpuTypeResolver.none()).root()).isEqualTo(host.root());
    }
}
