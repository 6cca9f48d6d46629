package dev.vgpu.daemon.discover;

import dev.vgpu.core.Snapshot;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.dra.DeviceClasses;
import dev.vgpu.dra.DriverName;
import java.io.PrintWriter;

/**
 * {@code discover --format deviceclasses}: the DeviceClasses of the extended-resource bridge for what would be
 * advertised (docs/DRA.md, "The extended-resource bridge"), rendered by vgpu-dra's {@link DeviceClasses}; this class
 * only calls it. The one class of {@code discover} that names DRA code: it prints DRA objects and runs nothing of DRA.
 */
final class DeviceClassReport {

    /** The driver the classes select; the same name and rule as {@code serve --dra-driver}. */
    static final CliOption DRIVER = CliOption.value("--dra-driver", "NAME", "With --format deviceclasses: the DRA"
            + " driver the classes select, a DNS subdomain of at most 63 characters starting with a letter (default:"
            + " gpu.vgpu.dev).");

    private DeviceClassReport() {
    }

    /**
     * Checks a {@code --dra-driver} value.
     *
     * @throws Refusal naming the flag and the rule the name breaks
     */
    static void requireDriver(String driver) {
        driverName(driver);
    }

    /**
     * One {@code resource.k8s.io/v1} DeviceClass per resource of the snapshot, YAML documents separated by
     * {@code ---}; a resource that cannot have one is a line on {@code err} saying why.
     */
    static String yaml(Snapshot snapshot, String driver, PrintWriter err) {
        DeviceClasses.Rendered rendered = DeviceClasses.of(driverName(driver), snapshot.resources().keySet());
        rendered.skipped().forEach(reason -> err.println("discover: " + reason));
        return rendered.yaml();
    }

    private static DriverName driverName(String driver) {
        if (driver == null || driver.isBlank()) {
            return DriverName.DEFAULT;
        }
        try {
            return new DriverName(driver.strip());
        } catch (IllegalArgumentException e) {
            throw new Refusal("invalid --dra-driver value: " + e.getMessage());
        }
    }
}
