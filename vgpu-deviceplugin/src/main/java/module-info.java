/**
 * The kubelet device-plugin adapter for vgpu snapshots: {@link dev.vgpu.deviceplugin.PluginManager} serves one
 * plugin per resource on a unix socket and registers it with the kubelet.
 *
 * <p>The generated API classes and the socket transport live in the module {@code dev.vgpu.kubelet}, which exports
 * them to this module (and the DRA plugin) only; no generated type is part of this module's API. That module's
 * stand-in kubelet ({@code dev.vgpu.kubelet.standin}) is readable by every user of this one, for tests and demos.
 */
module dev.vgpu.deviceplugin {
    requires transitive dev.vgpu.core;
    requires transitive dev.vgpu.attach;
    requires transitive dev.vgpu.kubelet;
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
}
