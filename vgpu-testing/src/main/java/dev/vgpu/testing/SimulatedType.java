package dev.vgpu.testing;

import java.util.Objects;

/**
 * One vGPU type of a {@link SimulatedCard}: its card-local id, its profile name and what it takes.
 *
 * @param id            the type id the driver lists and {@code nvidia/current_vgpu_type} takes, at least 1
 * @param name          the profile name as the driver prints it ({@code NVIDIA L40S-12Q}); no tab or line end
 * @param framebufferGb the framebuffer one vGPU of it takes, in GB, at least 1
 * @param maxInstances  the most vGPUs of it one card holds; 0 when only the framebuffer limits it
 */
public record SimulatedType(long id, String name, int framebufferGb, int maxInstances) {

    /** Checks. */
    public SimulatedType {
        Objects.requireNonNull(name, "name");
        if (id < 1 || framebufferGb < 1 || maxInstances < 0) {
            throw new IllegalArgumentException("type " + id + " " + name + ": id and framebuffer must be at least 1"
                    + " and max instances 0 or more");
        }
        if (name.isBlank() || name.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException("a type name is printable and not blank: \"" + name + "\"");
        }
    }

    /**
     * A type whose framebuffer is the number its name states before the series letters ({@code NVIDIA L40S-12Q}:
     * 12 GB), limited by the framebuffer only.
     *
     * @throws IllegalArgumentException when the name states no size
     */
    public static SimulatedType of(long id, String name) {
        String last = name.substring(name.lastIndexOf('-') + 1);
        String digits = last.replaceAll("[A-Za-z]+$", "");
        if (digits.isEmpty() || digits.length() == last.length() || !digits.matches("[0-9]{1,6}")) {
            throw new IllegalArgumentException("the name \"" + name + "\" states no framebuffer size; give it:"
                    + " new SimulatedType(id, name, gb, 0)");
        }
        return new SimulatedType(id, name, Integer.parseInt(digits), 0);
    }
}
