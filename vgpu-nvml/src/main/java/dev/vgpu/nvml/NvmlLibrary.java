package dev.vgpu.nvml;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The entry points of {@code libnvidia-ml.so.1} this module uses, bound by their versioned symbol names (the
 * unversioned names in {@code nvml.h} are macros for these). Every method returns an {@code nvmlReturn_t}.
 *
 * <p>C types: {@code nvmlDevice_t} and {@code nvmlEventSet_t} are one opaque pointer passed by value
 * ({@link Pointer}); {@code unsigned int} is {@code int}; {@code unsigned long long} is {@code long}.
 * {@code nvmlPciInfo_t} (68 bytes) and {@code nvmlEventData_t} (32 bytes) are passed as bounds-checked
 * {@link com.sun.jna.Memory} and read at the offsets in {@link NvmlApi}. Only {@link NvmlApi} calls this.
 */
interface NvmlLibrary extends Library {

    int nvmlInit_v2();

    int nvmlShutdown();

    String nvmlErrorString(int result);

    int nvmlDeviceGetCount_v2(IntByReference deviceCount);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    /** {@code pciBusId} is a NUL-terminated ASCII string. */
    int nvmlDeviceGetHandleByPciBusId_v2(byte[] pciBusId, PointerByReference device);

    /** {@code pci} points to at least 68 bytes. */
    int nvmlDeviceGetPciInfo_v3(Pointer device, Pointer pci);

    int nvmlDeviceGetSupportedVgpus(Pointer device, IntByReference vgpuCount, int[] vgpuTypeIds);

    int nvmlVgpuTypeGetName(int vgpuTypeId, byte[] vgpuTypeName, IntByReference size);

    int nvmlEventSetCreate(PointerByReference set);

    int nvmlDeviceGetSupportedEventTypes(Pointer device, LongByReference eventTypes);

    int nvmlDeviceRegisterEvents(Pointer device, long eventTypes, Pointer set);

    /** {@code data} points to at least 32 bytes. */
    int nvmlEventSetWait_v2(Pointer set, Pointer data, int timeoutms);

    int nvmlEventSetFree(Pointer set);
}
