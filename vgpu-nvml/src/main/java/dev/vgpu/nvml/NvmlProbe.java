package dev.vgpu.nvml;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Checks the binding against the real {@code libnvidia-ml.so.1} on a GPU host and prints what NVML
 * answers: init, device count, each device's PCI bus id (NVML's and the sysfs form), its supported vGPU
 * types with names (through the same resolver the daemon uses), and the result of registering for
 * critical-XID events; then runs the {@link XidWatcher} for a moment and stops it.
 *
 * <p>Usage: {@code java -cp vgpu-nvml.jar:jna-jpms.jar:vgpu-core.jar:slf4j-api.jar dev.vgpu.nvml.NvmlProbe
 * [LIBRARY_FILE]}, or {@code scripts/nvml-probe.sh}. Exits 0 when the library or driver is absent (and
 * says so); exits 1 only on an unexpected Java error.
 */
public final class NvmlProbe {

    private NvmlProbe() {
    }

    /**
     * Runs the probe.
     *
     * @param args optionally the library file to load instead of {@value Nvml#DEFAULT_LIBRARY}
     */
    public static void main(String[] args) {
        PrintStream out = System.out;
        Optional<Path> library = args.length > 0 ? Optional.of(Path.of(args[0])) : Optional.empty();
        out.println("library: " + library.map(Path::toString).orElse(Nvml.DEFAULT_LIBRARY + " (dynamic linker)"));
        try (Nvml nvml = Nvml.open(library)) {
            out.println(nvml.description());
            if (!nvml.available()) {
                out.println("result: NVML absent, nothing more to probe");
                return;
            }
            out.println("nvmlInit_v2: NVML_SUCCESS");
            try (Nvml.Lease lease = nvml.lease()) {
                probeDevices(lease.api(), nvml, out);
            } catch (NvmlException e) {
                out.println("error: " + e.getMessage());
            }
            probeWatcher(nvml, out);
        } catch (RuntimeException | LinkageError e) {
            e.printStackTrace(out);
            System.exit(1);
        }
        out.println("result: done");
    }

    private static void probeDevices(NvmlApi api, Nvml nvml, PrintStream out) throws NvmlException {
        int count = api.deviceCount();
        out.println("nvmlDeviceGetCount_v2: " + Integer.toUnsignedString(count));
        NvmlApi.EventSet set = null;
        try {
            set = api.eventSetCreate();
            out.println("nvmlEventSetCreate: NVML_SUCCESS");
        } catch (NvmlException e) {
            out.println("nvmlEventSetCreate: " + e.getMessage());
        }
        for (int index = 0; index < count; index++) {
            out.println("device " + index + ":");
            NvmlApi.Device device;
            PciAddress gpu;
            try {
                device = api.handleByIndex(index);
                NvmlApi.PciInfo pci = api.pciInfo(device);
                gpu = pci.address();
                out.printf(Locale.ROOT, "  pci: busId %s -> %s, pciDeviceId 0x%08X%n", pci.busId(), gpu, pci.pciDeviceId());
            } catch (NvmlException e) {
                out.println("  error: " + e.getMessage());
                continue;
            }
            VgpuTypeNames types = nvml.vgpuTypeResolver().supportedTypes(gpu);
            if (types instanceof VgpuTypeNames.Answered answered) {
                out.println("  supported vGPU types: " + answered.names().size());
                answered.names().entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
                        .forEach(e -> out.println("    " + e.getKey() + " : " + e.getValue()));
            } else if (types instanceof VgpuTypeNames.Unavailable unavailable) {
                out.println("  supported vGPU types: " + unavailable.reason());
            } else if (types instanceof VgpuTypeNames.Failed failed) {
                out.println("  supported vGPU types: " + failed.reason());
            }
            try {
                long supported = api.supportedEventTypes(device, gpu.toString());
                out.println("  supported event types: 0x" + Long.toHexString(supported));
            } catch (NvmlException e) {
                out.println("  supported event types: " + e.getMessage());
            }
            if (set != null) {
                try {
                    api.registerEvents(device, gpu.toString(), NvmlApi.EVENT_XID_CRITICAL_ERROR, set);
                    out.println("  register XID critical error events: NVML_SUCCESS");
                } catch (NvmlException e) {
                    out.println("  register XID critical error events: " + e.getMessage());
                }
            }
        }
        if (set != null) {
            api.eventSetFree(set);
            out.println("nvmlEventSetFree: NVML_SUCCESS");
        }
    }

    private static void probeWatcher(Nvml nvml, PrintStream out) {
        XidWatcher.Options options = XidWatcher.Options.defaults().withWaitTimeout(Duration.ofMillis(500));
        XidListener listener = new XidListener() {
            @Override
            public void onXid(PciAddress gpu, long xid) {
                out.println("watcher: XID " + xid + " on " + gpu);
            }

            @Override
            public void onEventsUnsupported(PciAddress gpu, String reason) {
                out.println("watcher: " + gpu + " cannot report XIDs: " + reason);
            }
        };
        XidWatcher watcher = XidWatcher.start(nvml, options, listener);
        out.println("watcher: watching " + watcher.watchedGpus() + ", running " + watcher.running());
        long started = System.nanoTime();
        try {
            TimeUnit.MILLISECONDS.sleep(1500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long closing = System.nanoTime();
        watcher.close();
        long closed = System.nanoTime();
        out.printf(Locale.ROOT, "watcher: ran %d ms, close took %d ms, running after close %s%n",
                TimeUnit.NANOSECONDS.toMillis(closing - started), TimeUnit.NANOSECONDS.toMillis(closed - closing),
                watcher.running());
    }
}
