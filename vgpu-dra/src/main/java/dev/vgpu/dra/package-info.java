/**
 * The DRA kubelet plugin: {@link dev.vgpu.dra.DriverName} names the driver, whose sockets and CDI kinds derive
 * from it (docs/DRA.md).
 */
package dev.vgpu.dra;
