/**
 * The kubelet's side of the device-plugin API v1beta1: {@link dev.vgpu.kubelet.standin.StandInKubelet}, a kubelet
 * on a directory of unix sockets for tests, demos and an operator's practice runs (no test framework inside).
 *
 * <p>The API classes generated from {@code api.proto} and the gRPC transport on unix sockets are not API of vgpu:
 * they are exported only to the adapters, so no generated type is part of a module's public surface
 * (docs/ARCHITECTURE.md, "Modules").
 */
@SuppressWarnings("module") // the modules named below need this one, so they are not there when it compiles
module dev.vgpu.kubelet {
    requires org.slf4j;
    requires io.grpc;
    requires io.grpc.stub;
    requires io.grpc.protobuf;
    requires io.grpc.netty.shaded;
    requires com.google.protobuf;
    requires com.google.common;
    // Guava's failureaccess is an explicit module that the automatic Guava module cannot require.
    requires com.google.common.util.concurrent.internal;

    exports dev.vgpu.kubelet.standin;
    exports dev.vgpu.kubelet.api.v1beta1 to dev.vgpu.deviceplugin;
    exports dev.vgpu.kubelet.api.transport to dev.vgpu.deviceplugin, dev.vgpu.dra;

    opens dev.vgpu.kubelet.api.v1beta1 to com.google.protobuf;
}
