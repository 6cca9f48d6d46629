package dev.vgpu.daemon.dra;

import dev.vgpu.daemon.ops.Metrics;
import dev.vgpu.dra.DraObserver;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import java.util.function.BooleanSupplier;

/**
 * The metrics of {@code serve --mode dra} (README, "Metrics and probes"), registered beside the daemon's own
 * ({@link Metrics}) in DRA mode only: prepared claims, Prepare and Unprepare answers per claim by result, slices
 * written, and whether the kubelet accepted the registration.
 *
 * <p>Thread-safe: the client's metrics are; called on the plugin's claims thread and the publisher's thread.
 */
final class DraMetrics implements DraObserver {

    private final Gauge prepared;
    private final Counter prepares;
    private final Counter unprepares;
    private final Counter slices;
    private final Metrics metrics;

    DraMetrics(Metrics metrics) {
        this.metrics = metrics;
        var registry = metrics.registry();
        prepared = Gauge.builder().name("vgpu_dra_prepared_claims")
                .help("ResourceClaims prepared on this node now (CDI spec and device metadata written)")
                .register(registry);
        prepares = Counter.builder().name("vgpu_dra_prepare_requests_total")
                .help("Claims in NodePrepareResources calls by result: ok (prepared) or failed (an error answered"
                        + " for the claim, which the kubelet retries)").labelNames("result").register(registry);
        unprepares = Counter.builder().name("vgpu_dra_unprepare_requests_total")
                .help("Claims in NodeUnprepareResources calls by result: ok or failed").labelNames("result")
                .register(registry);
        slices = Counter.builder().name("vgpu_dra_slices_published_total")
                .help("ResourceSlices created or updated in the API server").register(registry);
        for (String result : new String[] {"ok", "failed"}) {
            prepares.labelValues(result);
            unprepares.labelValues(result);
        }
    }

    /**
     * Registers {@code vgpu_dra_registered}, read at every scrape from {@code registered}: once the plugin it asks
     * exists (the plugin reports to this observer, so it is made after it).
     */
    void readRegistration(BooleanSupplier registered) {
        GaugeWithCallback.builder().name("vgpu_dra_registered")
                .help("1 while the kubelet's last NotifyRegistrationStatus accepted the DRA plugin, else 0")
                .callback(cb -> cb.call(registered.getAsBoolean() ? 1 : 0)).register(metrics.registry());
    }

    @Override
    public void claimPrepared(boolean ok) {
        prepares.labelValues(ok ? "ok" : "failed").inc();
    }

    @Override
    public void claimUnprepared(boolean ok) {
        unprepares.labelValues(ok ? "ok" : "failed").inc();
    }

    @Override
    public void preparedClaims(int count) {
        prepared.set(count);
    }

    @Override
    public void slicesPublished(int written) {
        slices.inc(written);
    }
}
