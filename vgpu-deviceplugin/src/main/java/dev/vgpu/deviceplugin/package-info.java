/**
 * The kubelet device-plugin adapter: {@link dev.vgpu.deviceplugin.PluginManager} turns core
 * {@link dev.vgpu.core.Plan}s into one device-plugin gRPC server per resource on unix sockets, with registration,
 * ListAndWatch, Allocate, preferred allocation and health.
 */
package dev.vgpu.deviceplugin;
