package dev.vgpu.daemon.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.ops.Metrics;
import dev.vgpu.nvml.XidEvent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * Every XID is counted, only counted ones mark: so an ignored XID neither changes health nor restarts a GPU's quiet
 * period (the manager restarts it on marks only, {@code GpuFaultRecoveryTest}).
 */
class XidHealthTest {

    private static final PciAddress GPU0 = PciAddress.parse("0000:41:00.0");
    private static final PciAddress GPU1 = PciAddress.parse("0000:c1:00.0");

    private record Mark(PciAddress gpu, OptionalInt instance, String reason) {
    }

    private final Metrics metrics = new Metrics(Clock.systemUTC());
    private final List<Mark> marks = new ArrayList<>();
    private final XidHealth health = new XidHealth(metrics, (gpu, instance, reason) -> marks.add(new Mark(gpu,
            instance, reason)));

    @Test
    void everyXidIsCountedOnlyCountedOnesMarkAndAnInstanceGoesWithItsGpu() throws Exception {
        health.onXidEvent(new XidEvent(43, Optional.of(GPU0), List.of(GPU0), OptionalInt.empty(), false));
        health.onXidEvent(new XidEvent(43, Optional.of(GPU0), List.of(GPU0), OptionalInt.of(2), false));
        health.onXidEvent(new XidEvent(79, Optional.of(GPU1), List.of(GPU1), OptionalInt.of(3), true));
        health.onXidEvent(new XidEvent(48, Optional.empty(), List.of(GPU0, GPU1), OptionalInt.of(3), true));

        assertThat(marks).containsExactly(new Mark(GPU1, OptionalInt.of(3), "critical XID 79"),
                new Mark(GPU0, OptionalInt.empty(), "critical XID 48"),
                new Mark(GPU1, OptionalInt.empty(), "critical XID 48"));
        assertThat(scrape()).contains("vgpu_xid_events_total{gpu=\"0000:41:00.0\",xid=\"43\"} 2.0",
                "vgpu_xid_events_total{gpu=\"0000:c1:00.0\",xid=\"79\"} 1.0",
                "vgpu_xid_events_total{gpu=\"unknown\",xid=\"48\"} 1.0");
    }

    @Test
    void thePlainCallbackMarksTheWholeGpu() {
        health.onXid(GPU0, 79);
        assertThat(marks).containsExactly(new Mark(GPU0, OptionalInt.empty(), "critical XID 79"));
    }

    private String scrape() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        metrics.write(out);
        return out.toString(StandardCharsets.UTF_8);
    }
}
