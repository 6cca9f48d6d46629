/**
 * The DRA kubelet plugin: {@link dev.vgpu.dra.DraPlugin} serves registration and the DRA service, preparing claims
 * that a {@link dev.vgpu.dra.ClaimReader} reads into CDI specs and KEP-5304 device metadata, bounded by
 * {@link dev.vgpu.dra.DraLimits}; {@link dev.vgpu.dra.DriverName} names the driver, whose sockets and CDI kinds derive
 * from it; {@link dev.vgpu.dra.ResourceSlices} models the node's pool as ResourceSlice specs (plain values; the
 * publisher of {@code dev.vgpu.dra.apiserver} writes them) (docs/DRA.md).
 */
package dev.vgpu.dra;
