package dev.vgpu.nvml;

import dev.vgpu.core.PciAddress;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One critical-XID event as NVML reported it, counted or not.
 *
 * @param xid         the XID number; 999 means NVML did not know the XID
 * @param gpu         the physical GPU NVML named, empty when it named none that is watched
 * @param gpus        the GPUs the event concerns: the one named, or every watched GPU when NVML named none; sorted
 * @param gpuInstance the GPU instance (MIG) NVML attributed the error to, empty when it attributed it to none
 * @param counted     false when the XID is on the ignore list in force (an application's fault): it changes no health
 */
public record XidEvent(long xid, Optional<PciAddress> gpu, List<PciAddress> gpus, OptionalInt gpuInstance,
                       boolean counted) {

    /** NVML's {@code gpuInstanceId} when the error belongs to no GPU instance. */
    static final int NO_INSTANCE = 0xFFFFFFFF;

    /** Copies and checks the fields. */
    public XidEvent {
        Objects.requireNonNull(gpu, "gpu");
        gpus = List.copyOf(gpus);
        Objects.requireNonNull(gpuInstance, "gpuInstance");
    }

    /** NVML's raw {@code gpuInstanceId} as an instance: {@link #NO_INSTANCE} (and anything negative) is none. */
    static OptionalInt instance(int raw) {
        return raw < 0 ? OptionalInt.empty() : OptionalInt.of(raw);
    }

    /** The event in words for a log line, e.g. {@code XID 79 on GPU 0000:41:00.0, GPU instance 3}. */
    public String describe() {
        return "XID " + xid + " on " + gpu.map(g -> "GPU " + g).orElse("no GPU NVML could name")
                + (gpuInstance.isPresent() ? ", GPU instance " + gpuInstance.getAsInt() : "");
    }
}
