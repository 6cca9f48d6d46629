package dev.vgpu.nvml;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import dev.vgpu.core.PciAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.IntSupplier;

/**
 * Checked, typed calls into {@link NvmlLibrary}: every return code is tested, every buffer is sized from
 * {@code nvml.h}, and a handle exists only when NVML returned it with success. A failure is an
 * {@link NvmlException}; a missing entry point is {@code NVML_ERROR_FUNCTION_NOT_FOUND}.
 *
 * <p>Stateless and thread-safe (NVML is). Callers must hold a {@link Nvml.Lease} so that NVML stays
 * initialized for the duration of every call.
 */
final class NvmlApi {

    /** {@code nvmlEventTypeXidCriticalError}. */
    static final long EVENT_XID_CRITICAL_ERROR = 0x8L;

    /** {@code nvmlPciInfo_t}: size and field offsets (LP64 and ILP32 alike: only chars and unsigned ints). */
    static final int PCI_INFO_SIZE = 68;
    static final int PCI_INFO_DOMAIN = 16;
    static final int PCI_INFO_BUS = 20;
    static final int PCI_INFO_DEVICE = 24;
    static final int PCI_INFO_PCI_DEVICE_ID = 28;
    static final int PCI_INFO_BUS_ID = 36;
    /** {@code NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE}. */
    static final int PCI_BUS_ID_BUFFER_SIZE = 32;

    /** {@code nvmlEventData_t} on LP64: size and field offsets. */
    static final int EVENT_DATA_SIZE = 32;
    static final int EVENT_DATA_DEVICE = 0;
    static final int EVENT_DATA_TYPE = 8;
    static final int EVENT_DATA_DATA = 16;
    static final int EVENT_DATA_GPU_INSTANCE = 24;
    static final int EVENT_DATA_COMPUTE_INSTANCE = 28;

    /** {@code NVML_VGPU_NAME_BUFFER_SIZE}. */
    static final int VGPU_NAME_BUFFER_SIZE = 64;
    /** A name longer than this is refused rather than allocated. */
    private static final int VGPU_NAME_MAX = 1024;
    /** Supported-type lists grow only with a driver update; three size changes in a row are an error. */
    private static final int SIZE_ATTEMPTS = 4;

    /** A device handle NVML returned with success. */
    record Device(Pointer handle) {
        Device {
            if (handle == null) {
                throw new IllegalArgumentException("null device handle");
            }
        }
    }

    /** An event set NVML returned with success. */
    record EventSet(Pointer handle) {
        EventSet {
            if (handle == null) {
                throw new IllegalArgumentException("null event set");
            }
        }
    }

    /**
     * The fields of {@code nvmlPciInfo_t} this module reads.
     *
     * @param busId       NVML's bus id, e.g. {@code 00000000:41:00.0}
     * @param address     the bus id as a sysfs address
     * @param pciDeviceId device id in the high 16 bits, vendor id in the low 16 bits
     */
    record PciInfo(String busId, PciAddress address, int pciDeviceId) {
    }

    /**
     * One event from {@code nvmlEventSetWait_v2}.
     *
     * @param device    the handle's address ({@link Pointer#nativeValue}); 0 when NVML names no device
     * @param eventType the event type bits
     * @param eventData the XID for XID events
     * @param gpuInstance NVML's {@code gpuInstanceId}, {@code 0xFFFFFFFF} (-1) when the event names none
     */
    record Event(long device, long eventType, long eventData, int gpuInstance) {
    }

    private final NvmlLibrary lib;

    NvmlApi(NvmlLibrary lib) {
        this.lib = lib;
    }

    /** {@code nvmlInit_v2}, returning its code: the caller decides what a failure means. */
    int init() throws NvmlException {
        return invoke("nvmlInit_v2()", lib::nvmlInit_v2);
    }

    /** {@code nvmlShutdown}, returning its code. */
    int shutdown() throws NvmlException {
        return invoke("nvmlShutdown()", lib::nvmlShutdown);
    }

    /** {@code nvmlErrorString}, or a placeholder when the library cannot say. */
    String errorString(int code) {
        try {
            String text = lib.nvmlErrorString(code);
            return text != null ? text : "no description";
        } catch (LinkageError | RuntimeException e) {
            return "no description (nvmlErrorString unavailable)";
        }
    }

    int deviceCount() throws NvmlException {
        IntByReference count = new IntByReference();
        check("nvmlDeviceGetCount_v2()", invoke("nvmlDeviceGetCount_v2", () -> lib.nvmlDeviceGetCount_v2(count)));
        return count.getValue();
    }

    Device handleByIndex(int index) throws NvmlException {
        PointerByReference out = new PointerByReference();
        String function = "nvmlDeviceGetHandleByIndex_v2(" + index + ")";
        check(function, invoke(function, () -> lib.nvmlDeviceGetHandleByIndex_v2(index, out)));
        return device(function, out);
    }

    /** The handle of a GPU by PCI bus id; NVML accepts the sysfs form {@code 0000:41:00.0}. */
    Device handleByBusId(String busId) throws NvmlException {
        PointerByReference out = new PointerByReference();
        String function = "nvmlDeviceGetHandleByPciBusId_v2(" + busId + ")";
        byte[] text = Arrays.copyOf(busId.getBytes(StandardCharsets.US_ASCII), busId.length() + 1);
        check(function, invoke(function, () -> lib.nvmlDeviceGetHandleByPciBusId_v2(text, out)));
        return device(function, out);
    }

    PciInfo pciInfo(Device device) throws NvmlException {
        try (Memory info = new Memory(PCI_INFO_SIZE)) {
            info.clear();
            String function = "nvmlDeviceGetPciInfo_v3()";
            check(function, invoke(function, () -> lib.nvmlDeviceGetPciInfo_v3(device.handle(), info)));
            String busId = cString(info.getByteArray(PCI_INFO_BUS_ID, PCI_BUS_ID_BUFFER_SIZE));
            try {
                return new PciInfo(busId, NvmlBusIds.toPciAddress(busId), info.getInt(PCI_INFO_PCI_DEVICE_ID));
            } catch (IllegalArgumentException e) {
                throw new NvmlException(NvmlReturn.UNKNOWN, function, "unusable bus id: " + e.getMessage());
            }
        }
    }

    /**
     * The supported vGPU type ids of a device: one call with {@code firstCapacity} entries, and on
     * {@code NVML_ERROR_INSUFFICIENT_SIZE} another with the count NVML asked for.
     */
    int[] supportedVgpus(Device device, String context, int firstCapacity) throws NvmlException {
        String function = "nvmlDeviceGetSupportedVgpus(" + context + ")";
        int capacity = Math.max(1, firstCapacity);
        for (int attempt = 0; attempt < SIZE_ATTEMPTS; attempt++) {
            int[] ids = new int[capacity];
            IntByReference count = new IntByReference(capacity);
            int code = invoke(function, () -> lib.nvmlDeviceGetSupportedVgpus(device.handle(), count, ids));
            int reported = count.getValue();
            if (code == NvmlReturn.SUCCESS) {
                if (reported < 0 || reported > capacity) {
                    throw new NvmlException(NvmlReturn.UNKNOWN, function,
                            "reported " + Integer.toUnsignedString(reported) + " entries for a buffer of " + capacity);
                }
                return Arrays.copyOf(ids, reported);
            }
            if (code != NvmlReturn.INSUFFICIENT_SIZE) {
                check(function, code);
            }
            if (reported <= capacity || reported > 1 << 16) {
                throw new NvmlException(code, function,
                        "asked for " + Integer.toUnsignedString(reported) + " entries after " + capacity);
            }
            capacity = reported;
        }
        throw new NvmlException(NvmlReturn.INSUFFICIENT_SIZE, function,
                "the list kept growing after " + SIZE_ATTEMPTS + " attempts");
    }

    /** The profile name of a vGPU type id, e.g. {@code NVIDIA L40S-1Q}. */
    String vgpuTypeName(int typeId) throws NvmlException {
        String function = "nvmlVgpuTypeGetName(" + Integer.toUnsignedString(typeId) + ")";
        int capacity = VGPU_NAME_BUFFER_SIZE;
        for (int attempt = 0; attempt < 2; attempt++) {
            byte[] name = new byte[capacity];
            IntByReference size = new IntByReference(capacity);
            int code = invoke(function, () -> lib.nvmlVgpuTypeGetName(typeId, name, size));
            if (code == NvmlReturn.SUCCESS) {
                return cString(name);
            }
            if (code != NvmlReturn.INSUFFICIENT_SIZE) {
                check(function, code);
            }
            int wanted = size.getValue();
            if (wanted <= capacity || wanted > VGPU_NAME_MAX) {
                throw new NvmlException(code, function, "asked for a buffer of " + Integer.toUnsignedString(wanted));
            }
            capacity = wanted;
        }
        throw new NvmlException(NvmlReturn.INSUFFICIENT_SIZE, function, "name buffer still too small");
    }

    EventSet eventSetCreate() throws NvmlException {
        PointerByReference out = new PointerByReference();
        String function = "nvmlEventSetCreate()";
        check(function, invoke(function, () -> lib.nvmlEventSetCreate(out)));
        Pointer handle = out.getValue();
        if (handle == null) {
            throw new NvmlException(NvmlReturn.UNKNOWN, function, "success without an event set");
        }
        return new EventSet(handle);
    }

    long supportedEventTypes(Device device, String context) throws NvmlException {
        LongByReference types = new LongByReference();
        String function = "nvmlDeviceGetSupportedEventTypes(" + context + ")";
        check(function, invoke(function, () -> lib.nvmlDeviceGetSupportedEventTypes(device.handle(), types)));
        return types.getValue();
    }

    void registerEvents(Device device, String context, long eventTypes, EventSet set) throws NvmlException {
        String function = "nvmlDeviceRegisterEvents(" + context + ", 0x" + Long.toHexString(eventTypes) + ")";
        check(function, invoke(function, () -> lib.nvmlDeviceRegisterEvents(device.handle(), eventTypes, set.handle())));
    }

    /**
     * Waits up to {@code timeoutMs} for one event; empty on {@code NVML_ERROR_TIMEOUT}.
     *
     * @param buffer at least {@link #EVENT_DATA_SIZE} bytes, owned by the calling thread
     */
    Optional<Event> waitEvent(EventSet set, Memory buffer, int timeoutMs) throws NvmlException {
        if (buffer.size() < EVENT_DATA_SIZE) {
            throw new IllegalArgumentException("event buffer of " + buffer.size() + " bytes");
        }
        buffer.clear(EVENT_DATA_SIZE);
        buffer.setInt(EVENT_DATA_GPU_INSTANCE, -1);
        buffer.setInt(EVENT_DATA_COMPUTE_INSTANCE, -1);
        String function = "nvmlEventSetWait_v2()";
        int code = invoke(function, () -> lib.nvmlEventSetWait_v2(set.handle(), buffer, timeoutMs));
        if (code == NvmlReturn.TIMEOUT) {
            return Optional.empty();
        }
        check(function, code);
        return Optional.of(new Event(Pointer.nativeValue(buffer.getPointer(EVENT_DATA_DEVICE)),
                buffer.getLong(EVENT_DATA_TYPE), buffer.getLong(EVENT_DATA_DATA), buffer.getInt(EVENT_DATA_GPU_INSTANCE)));
    }

    void eventSetFree(EventSet set) throws NvmlException {
        String function = "nvmlEventSetFree()";
        check(function, invoke(function, () -> lib.nvmlEventSetFree(set.handle())));
    }

    private static Device device(String function, PointerByReference out) throws NvmlException {
        Pointer handle = out.getValue();
        if (handle == null) {
            throw new NvmlException(NvmlReturn.UNKNOWN, function, "success without a device handle");
        }
        return new Device(handle);
    }

    private void check(String function, int code) throws NvmlException {
        if (code != NvmlReturn.SUCCESS) {
            throw new NvmlException(code, function, errorString(code));
        }
    }

    /** Runs one native call; an entry point the library lacks becomes {@code NVML_ERROR_FUNCTION_NOT_FOUND}. */
    private static int invoke(String function, IntSupplier call) throws NvmlException {
        try {
            return call.getAsInt();
        } catch (UnsatisfiedLinkError e) {
            throw new NvmlException(NvmlReturn.FUNCTION_NOT_FOUND, function,
                    "the loaded library lacks this entry point (driver too old?): " + e.getMessage());
        }
    }

    /** Bytes up to the first NUL (or the whole buffer when there is none), as UTF-8. */
    static String cString(byte[] bytes) {
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8);
    }
}
