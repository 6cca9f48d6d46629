package dev.vgpu.core.spi;

import dev.vgpu.core.PciAddress;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * vGPU profile names an operator gives for type ids, per PCI device id of the physical GPU: the names a card that
 * is fully consumed from the first start cannot show in sysfs, for hosts without NVML. Type ids are card-local but
 * fixed per GPU model and driver, which is why the table is keyed by the PF's device id.
 * <pre>{@code
 * VgpuTypeNameTable table = new VgpuTypeNameTable(Map.of("26b9", Map.of(1153L, "NVIDIA L40S-2Q")));
 * Host host = base.withVgpuTypes(table.after(nvmlResolver, base));
 * }</pre>
 *
 * @param names PF device id (four hex digits, kept in lowercase) → type id → profile name
 */
public record VgpuTypeNameTable(Map<String, Map<Long, String>> names) {

    private static final Pattern DEVICE_ID = Pattern.compile("[0-9a-f]{4}");
    private static final VgpuTypeNameTable EMPTY = new VgpuTypeNameTable(Map.of());

    /** Checks the ids and names and copies the maps. */
    public VgpuTypeNameTable {
        Map<String, Map<Long, String>> copy = new HashMap<>();
        names.forEach((deviceId, types) -> {
            String id = Objects.requireNonNull(deviceId, "device id").toLowerCase(Locale.ROOT);
            if (!DEVICE_ID.matcher(id).matches()) {
                throw new IllegalArgumentException("device id \"" + deviceId + "\" is not 4 hex digits");
            }
            types.forEach((typeId, name) -> {
                if (typeId == null || typeId < 0) {
                    throw new IllegalArgumentException("type id " + typeId + " of device " + id + " is not an id");
                }
                if (name == null || name.isBlank()) {
                    throw new IllegalArgumentException("type " + typeId + " of device " + id + " has no name");
                }
            });
            if (copy.put(id, Map.copyOf(types)) != null) {
                throw new IllegalArgumentException("device id " + id + " is given twice");
            }
        });
        names = Map.copyOf(copy);
    }

    /** A table that names nothing. */
    public static VgpuTypeNameTable empty() {
        return EMPTY;
    }

    /**
     * A resolver that asks {@code first} and adds what this table names for the card's device id where {@code first}
     * names nothing for a type id (an unavailable {@code first} answers the table alone; a failing one stays a failure);
     * with nothing for the card in the table it is {@code first}'s answer unchanged. The
     * card's device id is read under {@code host}'s root ({@code sys/bus/pci/devices/<pf>/device}). A catalog on the
     * card still wins over both: sources ask a resolver only for what their catalogs lack.
     *
     * @param first the resolver asked first (NVML, or {@link VgpuTypeResolver#none()})
     * @param host  the host whose sysfs tells each card's device id
     * @return the combined resolver; it never throws
     */
    public VgpuTypeResolver after(VgpuTypeResolver first, Host host) {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(host, "host");
        if (names.isEmpty()) {
            return first;
        }
        return pf -> combine(first.supportedTypes(pf), host, pf);
    }

    private VgpuTypeNames combine(VgpuTypeNames answer, Host host, PciAddress pf) {
        Map<Long, String> table = PciDeviceIds.of(host, pf).map(names::get).orElse(Map.of());
        if (table.isEmpty() || answer instanceof VgpuTypeNames.Failed) {
            // A resolver that failed this time stays a failure, so the scan keeps what the card had.
            return answer;
        }
        Map<Long, String> merged = new HashMap<>(table);
        if (answer instanceof VgpuTypeNames.Answered answered) {
            merged.putAll(answered.names());
        }
        return VgpuTypeNames.of(merged);
    }
}
