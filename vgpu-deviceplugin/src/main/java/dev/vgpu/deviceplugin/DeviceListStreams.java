package dev.vgpu.deviceplugin;

import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * The open ListAndWatch streams of one plugin; every stream gets every list (a kubelet may open a new stream
 * while an old one lingers).
 *
 * <p>At most {@value #MAX_STREAMS} are open (docs/RELIABILITY.md, "The gRPC servers"): a new stream is always
 * admitted, and at the bound the oldest stream other than the kubelet's is ended with {@code RESOURCE_EXHAUSTED}.
 * The kubelet's stream is the first one opened after a Register was sent (the kubelet opens it once it accepted the
 * registration, so nothing is in between but a client that raced it within that round trip).
 *
 * <p>Threads: the set is owned by the manager's context; {@link #prepare} runs on the gRPC thread of the call (it
 * wires gRPC's callbacks, which must be set before the call's handler returns), and a cancel only posts the
 * removal to the context. Each stream's mailbox ({@link DeviceListStream}) never blocks the context.
 */
final class DeviceListStreams {

    /** Open streams per plugin: the kubelet keeps one, and one more while it replaces it after a restart. */
    static final int MAX_STREAMS = 8;

    private final String resource;
    private final Executor context;
    /** In the order they were opened, oldest first. */
    private final Set<DeviceListStream> streams = new LinkedHashSet<>();
    /** A Register was sent since the last stream opened: the next stream is the kubelet's. */
    private boolean kubeletNext;
    /** The stream taken for the kubelet's, never ended for the bound; null before the first. */
    private DeviceListStream kubelets;

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

    /** A Register is about to be sent, so the next stream opened is the kubelet's; in the context. */
    void kubeletMayOpen() {
        kubeletNext = true;
    }

    /**
     * Adds a prepared stream and offers it {@code current}, ending the oldest stream but the kubelet's when
     * {@value #MAX_STREAMS} are open; in the context.
     */
    void open(DeviceListStream stream, ListAndWatchResponse current) {
        streams.removeIf(DeviceListStream::isDone);
        if (kubeletNext) {
            kubeletNext = false;
            kubelets = stream;
        } else if (streams.size() >= MAX_STREAMS) {
            streams.stream().filter(s -> s != kubelets).findFirst().ifPresent(oldest -> {
                streams.remove(oldest);
                oldest.refuse(Status.RESOURCE_EXHAUSTED.withDescription("more than " + MAX_STREAMS
                        + " ListAndWatch streams of " + resource + "; the oldest one ends").asRuntimeException());
            });
        }
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
        kubelets = null;
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
