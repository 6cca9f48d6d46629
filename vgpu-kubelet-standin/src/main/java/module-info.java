/**
 * A stand-in kubelet: the kubelet's side of the device-plugin API v1beta1 on a directory of unix sockets, for tests,
 * demos and an operator's practice runs without a kubelet. It holds no test framework, so a program may ship it.
 */
module dev.vgpu.kubelet.standin {
    requires dev.vgpu.kubelet.api;
    requires org.slf4j;
    requires io.grpc;
    requires io.grpc.stub;
    requires io.grpc.netty.shaded;
    requires com.google.protobuf;
    requires com.google.common;
    requires com.google.common.util.concurrent.internal;

    exports dev.vgpu.kubelet.standin;
}
