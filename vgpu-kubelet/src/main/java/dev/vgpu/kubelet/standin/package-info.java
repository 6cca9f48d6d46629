/** A kubelet stand-in that speaks the device-plugin API v1beta1, for tests and demos without a kubelet. */
package dev.vgpu.kubelet.standin;
