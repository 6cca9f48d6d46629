package dev.vgpu.nvml;

import com.sun.jna.Pointer;
import dev.vgpu.core.PciAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Critical-XID events registered on every GPU NVML sees, in one event set.
 *
 * @param watched     GPUs whose events arrive, by device handle ({@link Pointer#nativeValue}); the handles are
 *                    only compared with the device of an event, never passed back to NVML from there
 * @param unsupported GPUs that cannot report XIDs, with the NVML error
 */
record XidRegistration(Map<Long, PciAddress> watched, Map<PciAddress, String> unsupported) {

    private static final Logger LOG = LoggerFactory.getLogger(XidRegistration.class);

    XidRegistration {
        watched = Map.copyOf(watched);
        unsupported = Map.copyOf(unsupported);
    }

    /**
     * Registers {@code nvmlEventTypeXidCriticalError} on each device by index. A device NVML cannot name
     * (no handle, no PCI info) is logged and left out; one without XID events is listed as unsupported.
     *
     * @throws NvmlException when the devices cannot be counted
     */
    static XidRegistration registerAll(NvmlApi api, NvmlApi.EventSet set) throws NvmlException {
        Map<Long, PciAddress> watched = new LinkedHashMap<>();
        Map<PciAddress, String> unsupported = new LinkedHashMap<>();
        int count = api.deviceCount();
        for (int index = 0; index < count; index++) {
            NvmlApi.Device device;
            PciAddress gpu;
            try {
                device = api.handleByIndex(index);
                gpu = api.pciInfo(device).address();
            } catch (NvmlException e) {
                LOG.warn("GPU at NVML index {} is not watched for XID errors: {}", index, e.getMessage());
                continue;
            }
            try {
                long types = api.supportedEventTypes(device, gpu.toString());
                if ((types & NvmlApi.EVENT_XID_CRITICAL_ERROR) == 0) {
                    throw new NvmlException(NvmlReturn.NOT_SUPPORTED, "nvmlDeviceGetSupportedEventTypes(" + gpu + ")",
                            "XID critical error events not among the supported types 0x" + Long.toHexString(types));
                }
                api.registerEvents(device, gpu.toString(), NvmlApi.EVENT_XID_CRITICAL_ERROR, set);
                watched.put(Pointer.nativeValue(device.handle()), gpu);
            } catch (NvmlException e) {
                LOG.warn("GPU {} cannot report XID errors: {}", gpu, e.getMessage());
                unsupported.put(gpu, e.getMessage());
            }
        }
        return new XidRegistration(watched, unsupported);
    }
}
