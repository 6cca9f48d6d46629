package dev.vgpu.configurator;

import dev.vgpu.core.Device;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Type-name resolvers made of names already known, for {@link dev.vgpu.configurator.sysfs.SysfsVgpuHost} and for a
 * scan. A full card's catalogs list nothing, so the names of the types its VFs hold must come from elsewhere: NVML,
 * what a scan named earlier ({@link #fromDevices}), or what the configurator read before it filled the card
 * ({@link ApplyReport#typeNames()}). Answers never carry over from one card to another. Stateless; the resolvers it
 * makes are immutable.
 * <pre>{@code
 * VgpuTypeResolver names = KnownTypeNames.union(nvml, KnownTypeNames.fromDevices(vendorVfio.devices()));
 * HostFacts facts = SysfsVgpuHost.at(root, names).read(inUse);
 * }</pre>
 */
public final class KnownTypeNames {

    private KnownTypeNames() {
    }

    /** Each card's names; a card not in the map is {@code unavailable}. */
    public static VgpuTypeResolver of(Map<PciAddress, CardTypes> cards) {
        Map<PciAddress, Map<Long, String>> names = new HashMap<>();
        cards.forEach((pf, types) -> names.put(pf, types.names()));
        return answering(names, "no names were read for this card");
    }

    /**
     * The names of the types discovered devices hold: each device with a parent (its card), a vGPU type id and a
     * profile (as the {@code vendor-vfio} source records them) names that type on that card. A type two devices of
     * one card name differently is left out.
     */
    public static VgpuTypeResolver fromDevices(Collection<Device> devices) {
        Map<PciAddress, Map<Long, String>> names = new HashMap<>();
        Map<PciAddress, List<Long>> conflicts = new HashMap<>();
        for (Device device : devices) {
            if (device.parent().isEmpty() || device.facts().vgpuTypeId().isEmpty()
                    || device.facts().profile().isEmpty()) {
                continue;
            }
            PciAddress card = device.parent().get();
            long typeId = device.facts().vgpuTypeId().getAsLong();
            String profile = device.facts().profile().get();
            String known = names.computeIfAbsent(card, c -> new TreeMap<>()).putIfAbsent(typeId, profile);
            if (known != null && !known.equals(profile)) {
                conflicts.computeIfAbsent(card, c -> new ArrayList<>()).add(typeId);
            }
        }
        conflicts.forEach((card, ids) -> ids.forEach(names.get(card)::remove));
        return answering(names, "no discovered device of this card names a type");
    }

    /**
     * Asks every resolver and joins what they answered; on a conflict the earlier resolver's name wins. When none
     * answered: the first failure, else {@code unavailable} with every reason.
     */
    public static VgpuTypeResolver union(VgpuTypeResolver... resolvers) {
        List<VgpuTypeResolver> all = List.of(resolvers);
        return pf -> {
            Map<Long, String> names = new TreeMap<>();
            boolean answered = false;
            VgpuTypeNames failed = null;
            List<String> reasons = new ArrayList<>();
            for (VgpuTypeResolver resolver : all) {
                VgpuTypeNames answer = VgpuTypeResolver.memoizing(resolver).supportedTypes(pf);
                if (answer instanceof VgpuTypeNames.Answered named) {
                    answered = true;
                    named.names().forEach(names::putIfAbsent);
                } else if (answer instanceof VgpuTypeNames.Failed && failed == null) {
                    failed = answer;
                } else if (answer instanceof VgpuTypeNames.Unavailable unavailable) {
                    reasons.add(unavailable.reason());
                }
            }
            if (answered) {
                return VgpuTypeNames.of(names);
            }
            return failed != null ? failed : VgpuTypeNames.unavailable(String.join("; ", reasons));
        };
    }

    private static VgpuTypeResolver answering(Map<PciAddress, Map<Long, String>> names, String otherwise) {
        Map<PciAddress, Map<Long, String>> copy = new HashMap<>();
        names.forEach((pf, types) -> copy.put(pf, Map.copyOf(types)));
        return pf -> {
            Map<Long, String> types = copy.get(pf);
            return types == null ? VgpuTypeNames.unavailable(otherwise) : VgpuTypeNames.of(types);
        };
    }
}
