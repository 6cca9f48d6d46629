/**
 * The kubelet's device-plugin API v1beta1 (generated from {@code api.proto}) and gRPC servers and channels on unix
 * domain sockets. Not API of vgpu: both packages are exported only to the adapters and the stand-in kubelet, so the
 * generated types never become part of a module's public surface (docs/ARCHITECTURE.md, "Modules").
 */
@SuppressWarnings("module") // the modules named below need this one, so they are not there when it compiles
module dev.vgpu.kubelet.api {
    requires org.slf4j;
    requires io.grpc;
    requires io.grpc.stub;
    requires io.grpc.protobuf;
    requires io.grpc.netty.shaded;
    requires com.google.protobuf;
    requires com.google.common;
    requires com.google.common.util.concurrent.internal;

    exports dev.vgpu.kubelet.api.v1beta1 to dev.vgpu.deviceplugin, dev.vgpu.kubelet.standin;
    exports dev.vgpu.kubelet.api.transport to dev.vgpu.deviceplugin, dev.vgpu.dra, dev.vgpu.kubelet.standin;

    opens dev.vgpu.kubelet.api.v1beta1 to com.google.protobuf;
}
