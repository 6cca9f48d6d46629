package dev.vgpu.sysfs;

import dev.vgpu.core.Device;
import dev.vgpu.core.spi.DeviceCheck;
import dev.vgpu.core.spi.Host;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What makes a vendor-VFIO VF <em>this</em> VF for Allocate and the health check: its {@code vendor} and
 * {@code device} ids and its vGPU type id, recorded as {@code vgpu-type:10de:2335:1152} (docs/HOST-FACTS.md §3:
 * vendor and identity are re-read at allocation time). A VF whose function was replaced by another device, or
 * whose type was changed or destroyed, is "changed", and the message names only what changed: {@code vendor 10de}
 * → {@code vendor 8086}, {@code vGPU type 1152} → {@code vGPU type 1155}. An identity of the older form
 * {@code vgpu-type:1152} (type only) is still checked, on its type. Stateless.
 */
final class VfIdentity {

    private static final String KIND = "vgpu-type";
    static final String CURRENT_TYPE = "nvidia/current_vgpu_type";

    private VfIdentity() {
    }

    /** The identity to record: {@code vgpu-type:<vendor>:<device>:<type id>}. */
    static String of(String vendor, String device, long typeId) {
        return KIND + ":" + vendor + ":" + device + ":" + typeId;
    }

    /** The vGPU type id in {@code nvidia/current_vgpu_type} now, as a decimal without leading zeros; "0" for none. */
    static String currentType(Path dir, Host host) throws IOException {
        String text = SysfsFiles.readStripped(host, dir, CURRENT_TYPE);
        boolean number = !text.isEmpty() && text.length() <= 18 && SysfsFiles.isDigits(text);
        return text.isEmpty() ? "0" : number ? Long.toString(Long.parseLong(text)) : text;
    }

    /** Compares the recorded identity with the VF's files now; a device that records none is the same. */
    static DeviceCheck check(Host host, Device device) {
        Optional<String[]> recorded = device.identity().filter(i -> i.startsWith(KIND + ":"))
                .map(i -> i.substring(KIND.length() + 1).split(":", -1));
        if (recorded.isEmpty() || (recorded.get().length != 1 && recorded.get().length != 3)) {
            return DeviceCheck.same();
        }
        String[] was = recorded.get();
        boolean withIds = was.length == 3;
        String typeWas = "vGPU type " + was[was.length - 1];
        Path dir = host.path(PciBus.PCI_DEVICES).resolve(device.id());
        String reading = typeWas;
        String[] now = new String[was.length];
        try {
            if (withIds) {
                reading = "vendor " + was[0];
                now[0] = SysfsFiles.hexId(host, dir, "vendor");
                reading = "device " + was[1];
                now[1] = SysfsFiles.hexId(host, dir, "device");
                reading = typeWas;
            }
            now[was.length - 1] = currentType(dir, host);
        } catch (NoSuchFileException e) {
            return Files.isDirectory(dir) ? DeviceCheck.changed(reading, "unreadable (" + SysfsFiles.describe(e) + ")")
                    : DeviceCheck.changed(typeWas, "gone");
        } catch (IOException | RuntimeException e) {
            return DeviceCheck.changed(reading, "unreadable (" + (e instanceof IOException io
                    ? SysfsFiles.describe(io) : e.toString()) + ")");
        }
        List<String> before = new ArrayList<>();
        List<String> after = new ArrayList<>();
        if (withIds) {
            compare("vendor ", was[0], now[0], before, after);
            compare("device ", was[1], now[1], before, after);
        }
        String typeNow = now[was.length - 1];
        if (!typeNow.equals(was[was.length - 1])) {
            before.add(typeWas);
            after.add(typeNow.equals("0") ? "without a vGPU type (" + CURRENT_TYPE + " is 0)"
                    : "vGPU type " + SysfsFiles.printable(typeNow));
        }
        return before.isEmpty() ? DeviceCheck.same()
                : DeviceCheck.changed(String.join(", ", before), String.join(", ", after));
    }

    private static void compare(String words, String was, String now, List<String> before, List<String> after) {
        if (!now.equals(was)) {
            before.add(words + was);
            after.add(words + now);
        }
    }
}
