/**
 * A kubelet DRA plugin for vgpu snapshots, in the form KubeVirt consumes (docs/DRA.md): registration on
 * {@code plugins_registry}, the {@code v1} and {@code v1beta1} {@code DRAPlugin} services on the driver's socket,
 * and per prepared claim a CDI spec with the VFIO device nodes and the KEP-5304 device metadata KubeVirt's
 * virt-launcher reads. Devices come from a {@link dev.vgpu.core.Snapshot} and are checked by
 * {@link dev.vgpu.attach.Handovers} before every prepare, as the device plugin's Allocate does. Claims are read, and
 * ResourceSlices published, by {@code dev.vgpu.dra.apiserver}: this module carries no API-server client.
 *
 * <p>The generated kubelet API classes ({@code dev.vgpu.dra.grpc.*}) are implementation, not exported.
 */
module dev.vgpu.dra {
    requires transitive dev.vgpu.core;
    requires transitive dev.vgpu.attach;
    // For its unix-socket gRPC transport and directory watch only (a qualified export to this module).
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

    exports dev.vgpu.dra;

    // Protobuf reads generated messages reflectively (text format, descriptors).
    opens dev.vgpu.dra.grpc.registration to com.google.protobuf;
    opens dev.vgpu.dra.grpc.v1 to com.google.protobuf;
    opens dev.vgpu.dra.grpc.v1beta1 to com.google.protobuf;
    opens dev.vgpu.dra.grpc.health.v1 to com.google.protobuf;
    opens dev.vgpu.dra.grpc.health.v1alpha1 to com.google.protobuf;
}
