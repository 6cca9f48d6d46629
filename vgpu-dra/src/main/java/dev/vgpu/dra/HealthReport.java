package dev.vgpu.dra;

/**
 * One device's health as the {@code DRAResourceHealth} stream reports it (docs/DRA.md, "Does (health
 * stream)"), before it becomes a message of either API version.
 *
 * @param pool           the pool (the node name)
 * @param device         the device's name in the pool, e.g. {@code pci-0000-1b-00-4}
 * @param status         unknown until the plugin's first health verdict, then healthy or unhealthy
 * @param updatedSeconds Unix seconds of the report
 * @param message        empty for a healthy device
 */
record HealthReport(String pool, String device, Status status, long updatedSeconds, String message) {

    /** The three states of the kubelet's {@code HealthStatus}, in its order. */
    enum Status { UNKNOWN, HEALTHY, UNHEALTHY }
}
