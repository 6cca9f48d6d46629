package dev.vgpu.core;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One extended resource of a snapshot: its devices sorted by id, all from one source, all attached alike.
 *
 * @param name       the resource name
 * @param source     the source that produced it
 * @param attachment how its devices are handed to VMs
 * @param devices    its devices, non-empty, sorted by id, unique ids
 */
public record Resource(ResourceName name, String source, Attachment attachment, List<Device> devices) {

    private static final Comparator<Device> BY_ID = Comparator.comparing(Device::id);

    /** Sorts the devices and checks that they belong here. */
    public Resource {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(attachment, "attachment");
        devices = devices.stream().sorted(BY_ID).toList();
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("resource " + name + " has no devices");
        }
        for (int i = 0; i < devices.size(); i++) {
            Device d = devices.get(i);
            if (!d.resource().equals(name) || !d.source().equals(source) || d.attachment() != attachment) {
                throw new IllegalArgumentException("device " + d.id() + " (" + d.resource() + ", " + d.source()
                        + ", " + d.attachment() + ") does not belong to " + name + " of " + source);
            }
            if (i > 0 && devices.get(i - 1).id().equals(d.id())) {
                throw new IllegalArgumentException("device " + d.id() + " listed twice in " + name);
            }
        }
    }

    /**
     * A resource from devices that all carry its name, source and attachment.
     *
     * @throws IllegalArgumentException when the list is empty or the devices disagree
     */
    public static Resource of(List<Device> devices) {
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("a resource needs at least one device");
        }
        Device first = devices.get(0);
        return new Resource(first.resource(), first.source(), first.attachment(), devices);
    }

    /** The ids of its devices, sorted. */
    public Set<String> ids() {
        return devices.stream().map(Device::id).collect(Collectors.toCollection(java.util.TreeSet::new));
    }
}
