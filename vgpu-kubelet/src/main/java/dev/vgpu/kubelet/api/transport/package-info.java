/** Internal plumbing: gRPC servers and channels on unix domain sockets with shaded Netty epoll. */
package dev.vgpu.kubelet.api.transport;
