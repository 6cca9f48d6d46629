package dev.vgpu.bench.deviceplugin;

import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.AllocateResponse;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginOptions;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import java.io.IOException;
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
 * Allocate of 1 and of 8 passthrough GPUs (each re-checked in sysfs: its group link, vendor, group members)
 * against the no-op {@code GetDevicePluginOptions}, all over one real unix-socket channel to the plugin.
 * Sample mode reports p50 and p99. Run:
 * <pre>{@code
 * java -jar vgpu-benchmarks/target/benchmarks.jar AllocateBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class AllocateBenchmark {

    private PluginHost host;
    private DevicePluginGrpc.DevicePluginBlockingStub stub;
    private AllocateRequest one;
    private AllocateRequest eight;

    /** Builds the host, starts the plugin and dials it. */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        host = new PluginHost();
        stub = DevicePluginGrpc.newBlockingStub(host.channel);
        one = AllocateRequest.newBuilder().addContainerRequests(ContainerAllocateRequest.newBuilder()
                .addDevicesIds(host.bdfs.get(0))).build();
        eight = AllocateRequest.newBuilder().addContainerRequests(ContainerAllocateRequest.newBuilder()
                .addAllDevicesIds(host.bdfs)).build();
        if (stub.allocate(eight).getContainerResponses(0).getDevicesCount() != PluginHost.GPUS + 1) {
            throw new IllegalStateException("unexpected Allocate answer for 8 GPUs");
        }
    }

    /** Stops everything and deletes the temporary host. */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        host.close();
    }

    /** The no-op RPC on the same channel: the transport's own cost. */
    @Benchmark
    public DevicePluginOptions getDevicePluginOptions() {
        return stub.getDevicePluginOptions(Empty.getDefaultInstance());
    }

    /** Allocate of one GPU. */
    @Benchmark
    public AllocateResponse allocateOne() {
        return stub.allocate(one);
    }

    /** Allocate of eight GPUs in one container request. */
    @Benchmark
    public AllocateResponse allocateEight() {
        return stub.allocate(eight);
    }
}
