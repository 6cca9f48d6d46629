/**
 * The kubelet device-plugin API (v1beta1) for vgpu snapshots: {@link dev.vgpu.deviceplugin.PluginManager} serves
 * one plugin per resource on a unix socket and registers it with the kubelet; {@code dev.vgpu.deviceplugin.kubelet}
 * has a stand-in kubelet for tests and demos.
 *
 * <p>The generated API classes ({@code dev.vgpu.deviceplugin.v1beta1}) and the socket transport
 * ({@code dev.vgpu.deviceplugin.transport}) are implementation, not exported; the transport is exported to
 * {@code dev.vgpu.dra} alone, which serves its sockets with it.
 */
@SuppressWarnings("module") // dev.vgpu.dra needs this module, so it is not there when this one compiles
module dev.vgpu.deviceplugin {
    requires transitive dev.vgpu.core;
    requires dev.vgpu.attach;
    requires org.slf4j;
    requires io.grpc;
    requires io.grpc.stub;
    requires io.grpc.protobuf;
    requires io.grpc.netty.shaded;
    requires com.google.protobuf;
    requires com.google.common;
    // Guava's failureaccess is an explicit module that the automatic Guava module cannot require; without this
    // line a module-path application fails at run time with NoClassDefFoundError InternalFutureFailureAccess.
    requires com.google.common.util.concurrent.internal;

    exports dev.vgpu.deviceplugin;
    exports dev.vgpu.deviceplugin.kubelet;
    // The unix-socket transport is shared with the DRA plugin, not API.
    exports dev.vgpu.deviceplugin.transport to dev.vgpu.dra;

    // Protobuf reads generated messages reflectively (text format, descriptors).
    opens dev.vgpu.deviceplugin.v1beta1 to com.google.protobuf;
}
