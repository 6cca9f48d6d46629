package dev.vgpu.bench.deviceplugin;

import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The time from {@code PluginManager.apply} of an {@code Update} (8 GPUs to 7 and back) to a ListAndWatch
 * stream receiving the new list over the unix socket, with the stand-in kubelet's stream open too. Baseline in
 * the same run: {@code apply} alone of the same alternating plans (the caller's cost; the stream's receive side
 * runs concurrently). Run:
 * <pre>{@code
 * java -jar vgpu-benchmarks/target/benchmarks.jar UpdateLatencyBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class UpdateLatencyBenchmark {

    private PluginHost host;
    private Snapshot all;
    private Snapshot fewer;
    private boolean full = true;
    private final BlockingQueue<ListAndWatchResponse> received = new LinkedBlockingQueue<>();

    /** Builds the host and opens a stream that queues every list it receives. */
    @Setup(Level.Trial)
    public void setUp() throws IOException, InterruptedException {
        host = new PluginHost();
        all = host.snapshot(PluginHost.GPUS);
        fewer = host.snapshot(PluginHost.GPUS - 1);
        DevicePluginGrpc.newStub(host.channel).listAndWatch(Empty.getDefaultInstance(),
                new StreamObserver<ListAndWatchResponse>() {
                    @Override
                    public void onNext(ListAndWatchResponse value) {
                        received.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        if (received.poll(30, TimeUnit.SECONDS) == null) {
            throw new IllegalStateException("no first list on the stream");
        }
    }

    /** Stops everything and deletes the temporary host. */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        host.close();
    }

    /** apply(Update), then wait for the stream to deliver the list it caused. */
    @Benchmark
    public ListAndWatchResponse applyUntilStreamReceives() throws InterruptedException {
        Snapshot next = full ? fewer : all;
        int expected = full ? PluginHost.GPUS - 1 : PluginHost.GPUS;
        full = !full;
        host.apply(next);
        while (true) {
            ListAndWatchResponse list = received.take();
            if (list.getDevicesCount() == expected) {
                return list;
            }
        }
    }

    /** apply(Update) alone; the stream's queue is drained so it stays small. */
    @Benchmark
    public int applyOnly() {
        Snapshot next = full ? fewer : all;
        full = !full;
        host.apply(next);
        int drained = received.size();
        received.clear();
        return drained;
    }
}
