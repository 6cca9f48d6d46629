package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which VFs are in use now: named in the kubelet's device-plugin checkpoint or in the DRA plugin's prepared claims
 * (the daemon reads both). The {@link Applier} asks before it plans a card and again before every write, so a VF
 * taken meanwhile is not written either.
 */
@FunctionalInterface
public interface InUse {

    /**
     * The VFs in use now.
     *
     * @throws IOException when that cannot be told; the applier then writes nothing more to the card
     */
    Set<PciAddress> vfs() throws IOException;

    /** Nothing in use. */
    static InUse none() {
        return Set::of;
    }

    /**
     * The VFs any of {@code sources} names (the kubelet's checkpoint and the DRA plugin's, say), each asked at every
     * call; when one cannot tell, neither can the union.
     */
    static InUse allOf(InUse... sources) {
        List<InUse> all = List.of(sources);
        return () -> {
            Set<PciAddress> vfs = new TreeSet<>();
            for (InUse source : all) {
                vfs.addAll(source.vfs());
            }
            return Set.copyOf(vfs);
        };
    }

    /** Always these VFs. */
    static InUse of(Set<PciAddress> vfs) {
        Set<PciAddress> copy = Set.copyOf(vfs);
        return () -> copy;
    }
}
