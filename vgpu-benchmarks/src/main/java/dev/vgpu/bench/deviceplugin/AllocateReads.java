package dev.vgpu.bench.deviceplugin;

import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Makes Allocate calls against {@link PluginHost} between two marker files, so that a system-call trace of the
 * process shows which host files one Allocate reads and how often:
 *
 * <pre>
 * strace -f -qq -e trace=openat,readlink,readlinkat,newfstatat,stat,lstat -o /tmp/alloc.trace \
 *     java -cp vgpu-benchmarks/target/benchmarks.jar dev.vgpu.bench.deviceplugin.AllocateReads 10
 * scripts/allocate-reads.py /tmp/alloc.trace 10
 * </pre>
 *
 * The first argument is the number of one-GPU Allocates made between the markers ({@code vgpu-reads-begin} and
 * {@code vgpu-reads-end}, probed with {@code Files.exists} in the host's directory).
 */
public final class AllocateReads {

    private AllocateReads() {
    }

    /**
     * Runs the calls.
     *
     * @param args the number of Allocates (default 10)
     */
    public static void main(String[] args) throws IOException {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        try (PluginHost host = new PluginHost()) {
            DevicePluginGrpc.DevicePluginBlockingStub stub = DevicePluginGrpc.newBlockingStub(host.channel);
            AllocateRequest one = AllocateRequest.newBuilder().addContainerRequests(ContainerAllocateRequest
                    .newBuilder().addDevicesIds(host.bdfs.get(0))).build();
            for (int i = 0; i < 20; i++) {
                stub.allocate(one);
            }
            Path dir = host.dir;
            Files.exists(dir.resolve("vgpu-reads-begin"));
            for (int i = 0; i < calls; i++) {
                stub.allocate(one);
            }
            Files.exists(dir.resolve("vgpu-reads-end"));
            System.out.println("host " + dir.resolve("host") + ", " + calls + " Allocates of " + host.bdfs.get(0));
        }
    }
}
