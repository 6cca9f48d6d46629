package dev.vgpu.deviceplugin;

import dev.vgpu.deviceplugin.v1beta1.ListAndWatchResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * The open ListAndWatch streams of one plugin; every stream gets every list (a kubelet may open a new stream
 * while an old one lingers).
 *
 * <p>Threads: the set is owned by the manager's context; {@link #prepare} runs on the gRPC thread of the call (it
 * wires gRPC's callbacks, which must be set before the call's handler returns), and a cancel only posts the
 * removal to the context. Each stream's mailbox ({@link DeviceListStream}) never blocks the context.
 */
final class DeviceListStreams {

    private final String resource;
    private final Executor context;
    private final Set<DeviceListStream> streams = new HashSet<>();

    DeviceListStreams(String resource, Executor context) {
        this.resource = resource;
        this.context = context;
    }

    /** A stream for {@code observer} with gRPC's ready and cancel callbacks wired; on the call's gRPC thread. */
    DeviceListStream prepare(ServerCallStreamObserver<ListAndWatchResponse> observer) {
        DeviceListStream stream = new DeviceListStream(resource, observer);
        observer.setOnReadyHandler(stream::drain);
        observer.setOnCancelHandler(() -> {
            stream.cancelled();
            context.execute(() -> streams.remove(stream));
        });
        return stream;
    }

    /** Adds a prepared stream and offers it {@code current}; in the context. */
    void open(DeviceListStream stream, ListAndWatchResponse current) {
        streams.add(stream);
        stream.offer(current);
    }

    /** Offers {@code list} to every open stream; never blocks; in the context. */
    void publish(ListAndWatchResponse list) {
        streams.forEach(s -> s.offer(list));
    }

    /** Forgets every stream; with {@code complete}, each ends normally once its pending list is sent. */
    void endAll(boolean complete) {
        List<DeviceListStream> ending = List.copyOf(streams);
        streams.clear();
        if (complete) {
            ending.forEach(DeviceListStream::complete);
        }
    }

    /** The number of streams still open; in the context. */
    int open() {
        streams.removeIf(DeviceListStream::isDone);
        return streams.size();
    }
}
