/**
 * A kubelet DRA plugin for vgpu snapshots, in the form KubeVirt consumes (docs/DRA.md): registration on
 * {@code plugins_registry}, the {@code v1} and {@code v1beta1} {@code DRAPlugin} services on the driver's socket,
 * and per prepared claim a CDI spec with the VFIO device nodes and the KEP-5304 device metadata KubeVirt's
 * virt-launcher reads. Devices come from a {@link dev.vgpu.core.Snapshot} and are checked by
 * {@link dev.vgpu.attach.Handovers} before every prepare, as the device plugin's Allocate does.
 *
 * <p>The generated kubelet API classes ({@code dev.vgpu.dra.grpc.*}) are implementation, not exported.
 */
// fabric8's types are in this module's API (SlicePublisher, ApiClaimReader), so its modules are transitive although
// automatic.
@SuppressWarnings("requires-transitive-automatic")
module dev.vgpu.dra {
    requires transitive dev.vgpu.core;
    requires transitive dev.vgpu.attach;
    // For its unix-socket gRPC transport only (a qualified export to this module).
    requires dev.vgpu.kubelet;
    requires org.slf4j;
    requires io.grpc;
    requires io.grpc.stub;
    requires io.grpc.protobuf;
    requires com.google.protobuf;
    requires com.google.common;
    // Guava's failureaccess is an explicit module the automatic Guava module cannot require (as in
    // dev.vgpu.deviceplugin): without it a module-path application fails with NoClassDefFoundError.
    requires com.google.common.util.concurrent.internal;
    // The API server: fabric8's client API and models (automatic modules named after their jar files, since
    // fabric8 8.0.0 declares no module names; docs/BUILD.md) on the JDK's HTTP client.
    requires transitive kubernetes.client.api;
    requires transitive kubernetes.model.core;
    requires transitive kubernetes.model.resource;
    requires io.fabric8.kubernetes.client.jdkhttp;

    exports dev.vgpu.dra;

    // Protobuf reads generated messages reflectively (text format, descriptors).
    opens dev.vgpu.dra.grpc.registration to com.google.protobuf;
    opens dev.vgpu.dra.grpc.v1 to com.google.protobuf;
    opens dev.vgpu.dra.grpc.v1beta1 to com.google.protobuf;
    opens dev.vgpu.dra.grpc.health.v1 to com.google.protobuf;
    opens dev.vgpu.dra.grpc.health.v1alpha1 to com.google.protobuf;
}
