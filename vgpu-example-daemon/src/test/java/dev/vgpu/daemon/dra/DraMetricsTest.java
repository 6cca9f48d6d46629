package dev.vgpu.daemon.dra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.ops.Metrics;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import org.junit.jupiter.api.Test;

/** Every API rejection the publisher or the claim reader hears is counted by its HTTP status. */
class DraMetricsTest {

    @Test
    void apiRejectionsAreCountedByStatus() throws Exception {
        Metrics metrics = new Metrics(Clock.systemUTC());
        DraMetrics dra = new DraMetrics(metrics);

        dra.apiRejected(422);
        dra.apiRejected(422);
        dra.apiRejected(403);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        metrics.write(out);
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("vgpu_dra_api_rejections_total{code=\"422\"} 2.0",
                "vgpu_dra_api_rejections_total{code=\"403\"} 1.0");
    }
}
