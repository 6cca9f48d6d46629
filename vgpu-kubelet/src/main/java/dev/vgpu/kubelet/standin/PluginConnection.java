package dev.vgpu.kubelet.standin;

import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginOptions;
import io.grpc.ManagedChannel;
import java.util.concurrent.TimeUnit;

/**
 * The stand-in kubelet's client of one registered plugin: its channel and the options it answered.
 * Immutable except {@code streaming} (a list arrived and the stream is open), written under the kubelet's lock.
 */
final class PluginConnection {

    private static final long CALL_DEADLINE_SECONDS = 10;

    final String resourceName;
    final ManagedChannel channel;
    final DevicePluginOptions options;
    boolean streaming;

    PluginConnection(String resourceName, ManagedChannel channel, DevicePluginOptions options) {
        this.resourceName = resourceName;
        this.channel = channel;
        this.options = options;
    }

    DevicePluginGrpc.DevicePluginBlockingStub blocking() {
        return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    void close() {
        channel.shutdownNow();
    }
}
