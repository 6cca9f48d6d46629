package dev.vgpu.bench.sysfs;

import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads attributes of every function of this machine's real {@code /sys/bus/pci/devices} through
 * {@link HostFiles#load()} and compares each text with what NIO reads to the end: the check of the native reader's
 * stopping rule on kernfs, which no tmpfs test can make (BENCHMARKS.md, "Fewer system calls per rescan"). Run it
 * under {@code strace -f -e trace=openat,read,close} to count the reads per file. Prints one line:
 * {@code reader= functions= files= bytes= mismatches= failures=}; exit status 1 when any text differs. A third
 * argument {@code --no-compare} leaves out the NIO reads, so that a trace holds only the reader's.
 */
public final class RealSysfsReads {

    /** Text attributes (a page as their size) and binary ones ({@code config}: its real size). */
    private static final List<String> ATTRIBUTES = List.of("vendor", "device", "class", "subsystem_vendor",
            "numa_node", "modalias", "uevent", "resource", "local_cpulist", "config");

    private RealSysfsReads() {
    }

    /**
     * Reads and compares.
     *
     * @param args optional: the bus directory (default {@code /sys/bus/pci/devices}), the rounds (default 1) and
     *             {@code --no-compare}
     * @throws IOException when the bus cannot be listed
     */
    public static void main(String[] args) throws IOException {
        Path bus = Path.of(args.length > 0 ? args[0] : "/sys/bus/pci/devices");
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        boolean compare = args.length < 3 || !args[2].equals("--no-compare");
        int functions = 0;
        int files = 0;
        long bytes = 0;
        int mismatches = 0;
        int failures = 0;
        HostFiles reader = HostFiles.load();
        for (int round = 0; round < rounds; round++) {
            ScanScope scope = ScanScope.fresh();
            for (String function : reader.list(bus, scope)) {
                functions++;
                Path dir = bus.resolve(function);
                for (String attribute : ATTRIBUTES) {
                    String text;
                    try {
                        text = reader.read(dir, attribute, scope);
                    } catch (IOException e) {
                        failures++;
                        continue;
                    }
                    files++;
                    bytes += text.length();
                    if (!compare) {
                        continue;
                    }
                    String nio = new String(Files.readAllBytes(dir.resolve(attribute)), StandardCharsets.UTF_8);
                    if (!nio.equals(text)) {
                        mismatches++;
                        System.err.println(dir.resolve(attribute) + ": " + text.length() + " chars, NIO "
                                + nio.length());
                    }
                }
            }
        }
        System.out.println("reader=" + reader.describe().split(" ")[0] + " functions=" + functions
                + " files=" + files + " bytes=" + bytes + " mismatches=" + mismatches + " failures=" + failures);
        if (mismatches > 0) {
            System.exit(1);
        }
    }
}
