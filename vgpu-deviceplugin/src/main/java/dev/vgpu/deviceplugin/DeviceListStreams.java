package dev.vgpu.deviceplugin;

import dev.vgpu.deviceplugin.v1beta1.ListAndWatchResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open ListAndWatch streams of one plugin; every stream gets every list (a kubelet may open a new stream
 * while an old one lingers). Thread-safe: gRPC threads open and cancel streams, the plugin publishes; the
 * plugin calls {@link #open} and {@link #publish} under its state lock, so a new stream never misses a list.
 */
final class DeviceListStreams {

    private final String resource;
    private final Set<DeviceListStream> streams = ConcurrentHashMap.newKeySet();

    DeviceListStreams(String resource) {
        this.resource = resource;
    }

    /** Adds a stream, wires gRPC's ready and cancel callbacks, and offers it {@code current}. */
    void open(ServerCallStreamObserver<ListAndWatchResponse> observer, ListAndWatchResponse current) {
        DeviceListStream stream = new DeviceListStream(resource, observer);
        observer.setOnReadyHandler(stream::drain);
        observer.setOnCancelHandler(() -> {
            stream.cancelled();
            streams.remove(stream);
        });
        streams.add(stream);
        stream.offer(current);
    }

    /** Offers {@code list} to every open stream; never blocks. */
    void publish(ListAndWatchResponse list) {
        streams.forEach(s -> s.offer(list));
    }

    /** Forgets every stream; with {@code complete}, each ends normally once its pending list is sent. */
    void endAll(boolean complete) {
        Set<DeviceListStream> ending = Set.copyOf(streams);
        streams.clear();
        if (complete) {
            ending.forEach(DeviceListStream::complete);
        }
    }

    /** The number of streams still open. */
    int open() {
        streams.removeIf(DeviceListStream::isDone);
        return streams.size();
    }
}
