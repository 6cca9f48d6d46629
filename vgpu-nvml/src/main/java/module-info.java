/**
 * NVML for the vGPU device plugin: a JNA binding to {@code libnvidia-ml.so.1} that names the vGPU types of a
 * physical GPU ({@link dev.vgpu.nvml.Nvml#vgpuTypeResolver()}) and reports critical XID errors
 * ({@link dev.vgpu.nvml.XidWatcher}). When the library or the driver is absent,
 * {@link dev.vgpu.nvml.Nvml#open()} answers a null object instead of failing;
 * {@link dev.vgpu.nvml.RecoveringNvml} keeps trying while NVML is down and starts using it when it comes up.
 */
module dev.vgpu.nvml {
    requires transitive dev.vgpu.core;
    requires com.sun.jna;
    requires org.slf4j;

    exports dev.vgpu.nvml;
}
