package dev.vgpu.daemon.discover;

import dev.vgpu.core.Device;
import dev.vgpu.core.Resource;
import dev.vgpu.core.Skipped;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.JsonText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Renders a snapshot as the {@code discover} command prints it: the JSON contract of docs/ARCHITECTURE.md, or a table. */
final class DiscoveryReport {


    private DiscoveryReport() {
    }

    /**
     * The JSON document: resources sorted by name, devices by id, optional fields omitted when unknown;
     * {@code skipped} lists the skips the sources listed (each source lists at most its first 100),
     * {@code skippedCount} counts them all.
     */
    static String json(Snapshot snapshot) {
        List<Object> resources = new ArrayList<>();
        for (Resource resource : snapshot.resources().values()) {
            List<Object> devices = new ArrayList<>();
            for (Device device : resource.devices()) {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("id", device.id());
                device.numaNode().ifPresent(n -> d.put("numaNode", n));
                device.iommuGroup().ifPresent(g -> d.put("iommuGroup", g));
                device.parent().ifPresent(p -> d.put("parent", p.toString()));
                devices.add(d);
            }
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("resource", resource.name().fullName());
            r.put("source", resource.source());
            r.put("devices", devices);
            resources.add(r);
        }
        List<Object> skipped = new ArrayList<>();
        for (Skipped skip : snapshot.skipped()) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("id", skip.id());
            s.put("source", skip.source());
            s.put("reason", skip.reason());
            skipped.add(s);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("resources", resources);
        doc.put("skipped", skipped);
        doc.put("skippedCount", snapshot.skippedCount());
        return JsonText.write(doc);
    }

    /** A fixed-width table for people, then the skipped devices with their reasons (no failures, no summary). */
    static String table(Snapshot snapshot) {
        return table(snapshot, Map.of(), null);
    }

    /**
     * A fixed-width table for people, the counts, {@code summary} (when not null), the sources that failed with why,
     * then the skipped devices with their reasons.
     */
    static String table(Snapshot snapshot, Map<String, String> failures, String summary) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"RESOURCE", "SOURCE", "DEVICE", "NUMA", "IOMMU", "PARENT"});
        for (Resource resource : snapshot.resources().values()) {
            for (Device device : resource.devices()) {
                rows.add(new String[] {resource.name().fullName(), resource.source(), device.id(),
                    device.numaNode().isPresent() ? Integer.toString(device.numaNode().getAsInt()) : "-",
                    device.iommuGroup().orElse("-"), device.parent().map(Object::toString).orElse("-")});
            }
        }
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(String.format("%-" + widths[i] + "s", row[i]));
                if (i < row.length - 1) {
                    line.append("  ");
                }
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        if (snapshot.resources().isEmpty()) {
            out.append(failures.isEmpty() ? "(no devices to advertise)\n"
                    : "(no devices to advertise: the scan failed, see below)\n");
        }
        out.append(snapshot.resources().size()).append(" resources, ").append(snapshot.deviceCount())
                .append(" devices, ").append(snapshot.skippedCount()).append(" skipped")
                .append(snapshot.skippedCount() > snapshot.skipped().size()
                        ? " (" + snapshot.skipped().size() + " listed)" : "").append('\n');
        if (summary != null) {
            out.append(summary).append('\n');
        }
        failures.forEach((source, why) -> out.append("failed: source ").append(source).append(": ").append(why)
                .append('\n'));
        for (Skipped skip : snapshot.skipped()) {
            out.append("skipped ").append(skip.id()).append(" (").append(skip.source()).append("): ")
                    .append(skip.reason()).append('\n');
        }
        return out.toString();
    }
}
