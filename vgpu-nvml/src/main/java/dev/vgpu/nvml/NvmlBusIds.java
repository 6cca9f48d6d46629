package dev.vgpu.nvml;

import dev.vgpu.core.PciAddress;
import java.util.regex.Pattern;

/**
 * NVML's PCI bus ids as core {@link PciAddress}es. NVML prints {@code %08X:%02X:%02X.0} (uppercase, eight
 * domain digits, e.g. {@code 00000000:41:00.0}) and the legacy {@code %04X:%02X:%02X.0}; sysfs prints
 * {@code 0000:41:00.0}. Compare addresses, never the strings (docs/HOST-FACTS.md trap 23).
 */
final class NvmlBusIds {

    private static final Pattern NVML_FORM = Pattern.compile("[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-7]");

    private NvmlBusIds() {
    }

    /**
     * Parses an NVML bus id.
     *
     * @throws IllegalArgumentException naming the text when it is not one
     */
    static PciAddress toPciAddress(String busId) {
        String text = busId == null ? "" : busId.strip();
        if (!NVML_FORM.matcher(text).matches()) {
            throw new IllegalArgumentException("not an NVML PCI bus id: \"" + busId + "\"");
        }
        return PciAddress.parse(text);
    }
}
