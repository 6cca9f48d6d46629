package dev.vgpu.daemon.demo;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import dev.vgpu.kubelet.standin.StandInKubelet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What the stand-in kubelet of the {@code kubelet} command knows at one moment, and the changes between two such
 * moments in words: registrations, device lists, health, streams that ended. Everything a plugin sent (resource names,
 * endpoints, versions, device ids, health) is printed escaped and cut with the project's printable rule, so a hostile
 * plugin can neither drive the terminal nor forge a line (docs/RELIABILITY.md, "DRA mode").
 *
 * @param registrations every Register call so far, in order
 * @param resources     the latest device list per resource
 * @param streaming     the resources whose stream is open and delivered a list
 */
record KubeletView(List<Registration> registrations, Map<String, List<DeviceState>> resources, Set<String> streaming) {

    /** Copies. */
    KubeletView {
        registrations = List.copyOf(registrations);
        resources = Map.copyOf(resources);
        streaming = Set.copyOf(streaming);
    }

    /** Nothing seen yet. */
    static KubeletView empty() {
        return new KubeletView(List.of(), Map.of(), Set.of());
    }

    /** What {@code kubelet} knows now. */
    static KubeletView of(StandInKubelet kubelet) {
        Map<String, List<DeviceState>> resources = kubelet.resources();
        Set<String> names = new TreeSet<>(resources.keySet());
        kubelet.registrations().forEach(r -> names.add(r.resourceName()));
        return new KubeletView(kubelet.registrations(), resources,
                names.stream().filter(kubelet::streaming).collect(Collectors.toSet()));
    }

    /** The same registrations, with no device list and no stream: what a kubelet knows right after it restarted. */
    KubeletView restarted() {
        return new KubeletView(registrations, Map.of(), Set.of());
    }

    /** One line per change from {@code before} to this view, in words; empty when nothing changed. */
    List<String> changesSince(KubeletView before) {
        List<String> lines = new ArrayList<>();
        for (Registration r : registrations.subList(Math.min(before.registrations.size(), registrations.size()),
                registrations.size())) {
            lines.add("register " + name(r.resourceName()) + ": endpoint " + Printable.of(r.endpoint(), 120) + ", API "
                    + Printable.of(r.version(), 40)
                    + (r.preferredAllocationAvailable() ? ", preferred allocation offered" : ""));
        }
        Set<String> names = new TreeSet<>(resources.keySet());
        names.addAll(before.resources.keySet());
        for (String name : names) {
            List<DeviceState> was = before.resources.get(name);
            List<DeviceState> now = resources.get(name);
            if (now == null) {
                lines.add(name(name) + ": no device list any more");
            } else if (!now.equals(was)) {
                lines.add(name(name) + ": " + listChange(was, now));
            }
            // A list can only arrive over an open stream: one that arrived since the last view on a stream that is
            // not open now came over a stream that ended in between, even if this view never saw it open.
            boolean hadStream = before.streaming.contains(name) || (now != null && !now.equals(was));
            if (hadStream && !streaming.contains(name)) {
                lines.add(name(name) + ": its ListAndWatch stream ended");
            }
        }
        return lines;
    }

    private static String listChange(List<DeviceState> was, List<DeviceState> now) {
        if (now.isEmpty()) {
            return "an empty device list (the plugin retired the resource)";
        }
        long healthy = now.stream().filter(DeviceState::healthy).count();
        String counts = now.size() + (now.size() == 1 ? " device, " : " devices, ") + healthy + " healthy";
        if (was == null || was.isEmpty()) {
            String shown = now.stream().limit(16).map(KubeletView::describe).collect(Collectors.joining(", "));
            return counts + ": " + shown + (now.size() > 16 ? " and " + (now.size() - 16) + " more" : "");
        }
        Map<String, DeviceState> before = new TreeMap<>();
        was.forEach(d -> before.put(d.id(), d));
        Map<String, DeviceState> after = new TreeMap<>();
        now.forEach(d -> after.put(d.id(), d));
        List<String> parts = new ArrayList<>();
        List<String> in = after.keySet().stream().filter(id -> !before.containsKey(id)).toList();
        List<String> out = before.keySet().stream().filter(id -> !after.containsKey(id)).toList();
        if (!in.isEmpty()) {
            parts.add("new " + ids(in));
        }
        if (!out.isEmpty()) {
            parts.add("gone " + ids(out));
        }
        after.forEach((id, d) -> {
            DeviceState old = before.get(id);
            if (old != null && !old.health().equals(d.health())) {
                parts.add(Printable.of(id, 80) + " is " + Printable.of(d.health(), 40) + " now (was "
                        + Printable.of(old.health(), 40) + ")");
            } else if (old != null && !old.equals(d)) {
                parts.add(id + " is now " + describe(d));
            }
        });
        if (parts.isEmpty()) {
            parts.add("the same devices sent again");
        }
        return String.join("; ", parts) + "; " + counts;
    }

    private static String describe(DeviceState d) {
        return Printable.of(d.id(), 80) + " " + Printable.of(d.health(), 40) + (d.numaNode().isPresent()
                ? " (NUMA node " + d.numaNode().getAsInt() + ")" : "");
    }

    /** A resource name as a plugin sent it, escaped and cut (a real one has at most 74 characters). */
    private static String name(String resource) {
        return Printable.of(resource, 120);
    }

    /** Device ids as a plugin sent them: each escaped and cut, at most 16 named, then how many more. */
    private static String ids(List<String> ids) {
        String shown = ids.stream().limit(16).map(id -> Printable.of(id, 80)).collect(Collectors.joining(", "));
        return ids.size() <= 16 ? shown : shown + " and " + (ids.size() - 16) + " more";
    }
}
