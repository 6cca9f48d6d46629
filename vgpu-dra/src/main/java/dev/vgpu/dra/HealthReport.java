package dev.vgpu.dra;

/**
 * One device's health as the {@code DRAResourceHealth} stream reports it (docs/DRA.md §2), before it becomes a
 * message of either API version.
 *
 * @param pool           the pool (the node name)
 * @param device         the device's name in the pool, e.g. {@code pci-0000-1b-00-4}
 * @param healthy        healthy or unhealthy (this driver never reports unknown: it knows every device it lists)
 * @param updatedSeconds Unix seconds of the report
 * @param message        empty for a healthy device
 */
record HealthReport(String pool, String device, boolean healthy, long updatedSeconds, String message) {
}
