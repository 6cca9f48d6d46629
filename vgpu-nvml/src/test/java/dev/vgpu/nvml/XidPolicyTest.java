package dev.vgpu.nvml;

import static dev.vgpu.nvml.NvmlStub.GPU0;
import static dev.vgpu.nvml.NvmlStub.GPU1;
import static dev.vgpu.nvml.NvmlStub.calls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.PciAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The XID policy of a configuration, through the stub's real JNA path: off registers nothing at all. */
class XidPolicyTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final NvmlStub.Control stub = NvmlStub.control();
    private final List<PciAddress> reported = new CopyOnWriteArrayList<>();

    @BeforeEach
    void reset() {
        stub.stub_reset();
        System.clearProperty(Nvml.LIBRARY_PROPERTY);
    }

    @AfterEach
    void nothingLeft() {
        // A watcher's thread holds its event set and an NVML initialization until it ends: none is left.
        assertThat(stub.stub_live_event_sets()).as("event sets left").isZero();
        assertThat(stub.stub_init_refcount()).isZero();
        NvmlStub.assertNoMisuse(stub);
    }

    @Test
    void theDefaultsAreTheListThatWasHardCoded() {
        assertThat(XidPolicy.defaults().enabled()).isTrue();
        assertThat(XidPolicy.defaults().ignored()).containsExactlyInAnyOrder(13L, 31L, 43L, 45L, 68L, 109L)
                .isEqualTo(XidWatcher.DEFAULT_IGNORED_XIDS);
        assertThat(XidPolicy.defaults().options()).isEqualTo(XidWatcher.Options.defaults());
        assertThat(XidPolicy.defaults().withIgnored(Set.of()).options().ignoredXids()).isEmpty();
        assertThatThrownBy(() -> XidPolicy.defaults().withIgnored(Set.of(0L)))
                .hasMessageContaining("XID 0 is not an XID");
    }

    @Test
    void recoverAfterIsZeroByDefaultNeverNegativeAndSaidInWords() {
        assertThat(XidPolicy.defaults().recoverAfter()).isZero();
        XidPolicy quiet = XidPolicy.defaults().withIgnored(Set.of(43L)).withRecoverAfter(Duration.ofMinutes(10));
        assertThat(quiet.recoverAfter()).isEqualTo(Duration.ofMinutes(10));
        assertThat(quiet.ignored()).containsExactly(43L);
        assertThat(quiet).hasToString("XID health on, ignoring XIDs [43], recovery after 10m0s quiet");
        assertThat(XidPolicy.defaults()).hasToString("XID health on, ignoring XIDs [13, 31, 43, 45, 68, 109], no"
                + " recovery");
        assertThat(quiet.counts(79)).isTrue();
        assertThat(quiet.counts(43)).isFalse();
        assertThat(quiet.withEnabled(false).counts(79)).isFalse();
        assertThatThrownBy(() -> XidPolicy.defaults().withRecoverAfter(Duration.ofSeconds(-1)))
                .hasMessageContaining("must not be negative");
    }

    @Test
    void offRegistersNoEventAndStartsNoWatcher() {
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            assertThat(nvml.available()).isTrue();
            assertThat(XidPolicy.off().watch(nvml, (gpu, xid) -> reported.add(gpu))).isFalse();
            assertThat(nvml.xidWatcher()).isEmpty();
        }
        assertThat(calls(stub, "nvmlEventSetCreate")).isZero();
        assertThat(calls(stub, "nvmlDeviceRegisterEvents")).isZero();
        assertThat(reported).isEmpty();
    }

    @Test
    void onRegistersEveryGpuAndIgnoresWhatThePolicyIgnores() {
        // The stub queues XID 43 (ignored by default) on GPU0 and critical XID 79 on GPU1.
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            assertThat(XidPolicy.defaults().withIgnored(Set.of(79L)).watch(nvml, (gpu, xid) -> reported.add(gpu)))
                    .isTrue();
            assertThat(calls(stub, "nvmlDeviceRegisterEvents")).isPositive();
            await().atMost(PATIENCE).until(() -> calls(stub, "nvmlEventSetWait_v2") >= 3);
            assertThat(reported).as("79 ignored, 43 counted by this policy").containsExactly(GPU0);
        }
        stub.stub_reset();
        reported.clear();
        try (RecoveringNvml nvml = RecoveringNvml.open(Optional.of(NvmlStub.library()))) {
            XidPolicy.defaults().watch(nvml, (gpu, xid) -> reported.add(gpu));
            await().atMost(PATIENCE).until(() -> calls(stub, "nvmlEventSetWait_v2") >= 3);
            assertThat(reported).as("43 ignored, 79 counted by default").containsExactly(GPU1);
        }
    }
}
