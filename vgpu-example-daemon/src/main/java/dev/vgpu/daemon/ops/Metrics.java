package dev.vgpu.daemon.ops;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.ScanObserver;
import dev.vgpu.core.Skipped;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.deviceplugin.PluginObserver;
import dev.vgpu.nvml.XidEvent;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The daemon's Prometheus metrics (README, "Metrics"). Counters and histograms are fed by the plugin manager
 * ({@link PluginObserver}), the rescan loop ({@link ScanObserver}) and the XID watcher; gauges are read at scrape
 * time from what the node agent holds ({@link #readFrom}: the adapter's resources, the current snapshot, NVML).
 * A mode's own metrics register beside these ({@link #registry()}).
 *
 * <p>Why the Prometheus Java client 1.x rather than Micrometer: the daemon only ever exposes Prometheus text, the
 * client's names and types are Prometheus's own (no naming convention to translate), and it costs about 400 KB of
 * jars without a protobuf runtime. Label values are bounded: resource names, source names, gRPC code names, XIDs
 * and physical GPUs, never device ids.
 *
 * <p>Thread-safe: the client's metrics are; the suppliers read volatile or immutable state.
 */
public final class Metrics implements PluginObserver, ScanObserver {

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Clock clock;
    private final Counter allocations;
    private final Histogram allocationLatency;
    private final Counter preferred;
    private final Histogram preferredLatency;
    private final Counter registrations;
    private final Counter kubeletRestarts;
    private final Histogram scanDuration;
    private final Counter scans;
    private final Counter sourceFailures;
    private final Gauge lastSuccess;
    private final Counter rescanRequests;
    private final Counter xids;
    private final Gauge buildInfo;

    /**
     * Registers every counter and histogram; the gauges follow with {@link #readFrom}, once what they read exists.
     *
     * @param clock the wall clock for the last-success timestamp
     */
    public Metrics(Clock clock) {
        this.clock = clock;
        double[] rpcBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1};
        allocations = Counter.builder().name("vgpu_allocate_requests_total")
                .help("Allocate calls by resource and gRPC status code (OK on success)")
                .labelNames("resource", "code").register(registry);
        allocationLatency = Histogram.builder().name("vgpu_allocate_duration_seconds")
                .help("Time to answer Allocate").labelNames("resource").classicOnly()
                .classicUpperBounds(rpcBuckets).register(registry);
        preferred = Counter.builder().name("vgpu_preferred_allocation_requests_total")
                .help("GetPreferredAllocation calls by resource and gRPC status code")
                .labelNames("resource", "code").register(registry);
        preferredLatency = Histogram.builder().name("vgpu_preferred_allocation_duration_seconds")
                .help("Time to answer GetPreferredAllocation").labelNames("resource").classicOnly()
                .classicUpperBounds(rpcBuckets).register(registry);
        registrations = Counter.builder().name("vgpu_registrations_total")
                .help("Successful registrations with the kubelet by resource (more than one: re-registrations)")
                .labelNames("resource").register(registry);
        kubeletRestarts = Counter.builder().name("vgpu_kubelet_restarts_total")
                .help("Kubelet restarts seen (a new kubelet.sock)").register(registry);
        scanDuration = Histogram.builder().name("vgpu_scan_duration_seconds")
                .help("Duration of discovery rounds (scan of every source and applying the change)").classicOnly()
                .classicUpperBounds(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
                .register(registry);
        scans = Counter.builder().name("vgpu_scans_total")
                .help("Discovery rounds by result: ok (every source answered) or failed").labelNames("result")
                .register(registry);
        sourceFailures = Counter.builder().name("vgpu_source_failures_total")
                .help("Scans in which a source failed and kept its previous devices, by source").labelNames("source")
                .register(registry);
        lastSuccess = Gauge.builder().name("vgpu_scan_last_success_timestamp_seconds")
                .help("Unix time of the end of the last round in which every source answered").register(registry);
        rescanRequests = Counter.builder().name("vgpu_rescan_requests_total")
                .help("Rescans asked for out of schedule (SIGHUP)").register(registry);
        xids = Counter.builder().name("vgpu_xid_events_total")
                .help("Critical XID events reported by NVML, ignored ones too, by XID and physical GPU (unknown: NVML"
                        + " named none)").labelNames("xid", "gpu")
                .register(registry);
        buildInfo = Gauge.builder().name("vgpu_build_info")
                .help("Always 1: the daemon's version and the pci.ids database its resource names come from")
                .labelNames("version", "pciids").register(registry);
        scans.labelValues("ok");
        scans.labelValues("failed");
    }

    /**
     * Registers the gauges, read at every scrape: called once, before anything scrapes.
     *
     * @param resources the resources served now (devices by health, registration, serving)
     * @param snapshot  the current snapshot (skipped devices)
     * @param nvmlUp    whether NVML is available now
     */
    public void readFrom(Supplier<List<ResourceGauge>> resources, Supplier<Snapshot> snapshot, BooleanSupplier nvmlUp) {
        GaugeWithCallback.builder().name("vgpu_devices").help("Advertised devices by resource and health")
                .labelNames("resource", "health").callback(cb -> {
                    for (ResourceGauge s : resources.get()) {
                        cb.call(s.healthy(), s.resource(), "healthy");
                        cb.call(s.unhealthy(), s.resource(), "unhealthy");
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("vgpu_resource_registered")
                .help("1 when the resource's last registration with the kubelet holds, else 0")
                .labelNames("resource").callback(cb -> resources.get()
                        .forEach(s -> cb.call(s.registered() ? 1 : 0, s.resource()))).register(registry);
        GaugeWithCallback.builder().name("vgpu_resource_serving")
                .help("1 when the resource's gRPC server is up on its socket, else 0")
                .labelNames("resource").callback(cb -> resources.get()
                        .forEach(s -> cb.call(s.serving() ? 1 : 0, s.resource()))).register(registry);
        GaugeWithCallback.builder().name("vgpu_skipped_devices")
                .help("Devices seen but not advertised in the current snapshot, by source").labelNames("source")
                .callback(cb -> skippedBySource(snapshot.get()).forEach((source, n) -> cb.call(n, source)))
                .register(registry);
        GaugeWithCallback.builder().name("vgpu_nvml_available").help("1 when NVML is loaded and initialised, else 0")
                .callback(cb -> cb.call(nvmlUp.getAsBoolean() ? 1 : 0)).register(registry);
    }

    /** Skips per source, the listed ones and those only counted (a source lists at most 100). */
    private static Map<String, Integer> skippedBySource(Snapshot snapshot) {
        Map<String, Integer> out = new TreeMap<>(snapshot.unlistedSkips());
        for (Skipped skip : snapshot.skipped()) {
            out.merge(skip.source(), 1, Integer::sum);
        }
        return out;
    }

    /** The registry, for the metrics of one mode only (the DRA mode's). */
    public PrometheusRegistry registry() {
        return registry;
    }

    /** Writes every metric in the Prometheus text format. */
    public void write(OutputStream out) throws IOException {
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
    }

    /** The content type of {@link #write}. */
    public static String contentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    @Override
    public void allocated(ResourceName resource, String code, Duration took) {
        allocations.labelValues(resource.fullName(), code).inc();
        allocationLatency.labelValues(resource.fullName()).observe(seconds(took));
    }

    @Override
    public void preferredAllocation(ResourceName resource, String code, Duration took) {
        preferred.labelValues(resource.fullName(), code).inc();
        preferredLatency.labelValues(resource.fullName()).observe(seconds(took));
    }

    @Override
    public void registered(ResourceName resource) {
        registrations.labelValues(resource.fullName()).inc();
    }

    @Override
    public void kubeletRestarted() {
        kubeletRestarts.inc();
    }

    @Override
    public void scanned(Duration took, Scanner.Result result) {
        scanDuration.observe(seconds(took));
        result.failures().keySet().forEach(source -> sourceFailures.labelValues(source).inc());
        if (result.failures().isEmpty()) {
            scans.labelValues("ok").inc();
            lastSuccess.set(clock.millis() / 1000.0);
        } else {
            scans.labelValues("failed").inc();
        }
    }

    @Override
    public void roundFailed(Duration took, Throwable error) {
        scanDuration.observe(seconds(took));
        scans.labelValues("failed").inc();
    }

    /** Says which build runs with which pci.ids ({@code vgpu_build_info}); called once at start. */
    public void buildInfo(String version, String pciIds) {
        buildInfo.labelValues(version, pciIds).set(1);
    }

    /** A rescan was asked for out of schedule. */
    public void rescanRequested() {
        rescanRequests.inc();
    }

    /** NVML reported a critical XID, counted toward health or not: one count per event. */
    public void xid(XidEvent event) {
        xids.labelValues(Long.toString(event.xid()), event.gpu().map(PciAddress::toString).orElse("unknown")).inc();
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
