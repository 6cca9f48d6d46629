package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import dev.vgpu.kubelet.api.v1beta1.AllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.ContainerAllocateRequest;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginGrpc;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.ListAndWatchResponse;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.kubelet.testsupport.AllocateFlood;
import dev.vgpu.testing.SysfsTree;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory cases of the fault suite (docs/RELIABILITY.md) against the packaged daemon with the heap and stack
 * of deploy/base/daemonset.yaml (its JVM flags, on the JDK 25 the image's runtime is linked from): 100,000
 * dangling bus entries, one Allocate of 120,000 container requests, and floods of never-reading ListAndWatch
 * streams and Allocates at a plugin's socket.
 * Each must leave the process alive (or exit 0), answer with a bounded result, and never run out of heap.
 */
@Tag("reliability")
class ManifestHeapIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";

    @TempDir
    Path tmp;

    /**
     * One {@code discover} against both hostile inputs at once (a launch each would prove no more): 100,000 dangling
     * bus entries, counted, beside a passthrough GPU that is still named although its pci.ids has a 40 MB line,
     * skipped naming the file.
     */
    @Test
    void aHundredThousandDanglingBusEntriesAndAFortyMegabyteLineInPciIdsStayWithinTheManifestsHeap()
            throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path bus = Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        for (int i = 0; i < 100_000; i++) {
            String bdf = String.format(Locale.ROOT, "%04x:%02x:%02x.%d", i >> 16, (i >> 8) & 0xff, (i >> 3) & 0x1f,
                    i & 7);
            Files.createSymbolicLink(bus.resolve(bdf), Path.of("../../../devices/gone/" + bdf));
        }
        // A domain the dangling entries never use (they stop at 0001:86:9f.7).
        SysfsTree.at(root).passthroughGpu("0002:41:00.0", 0x2331).iommuGroup(41).create();
        Path pciIds = tmp.resolve("pci.ids");
        try (var out = Files.newBufferedWriter(pciIds)) {
            out.write("10de  NVIDIA Corporation\n\t2330  ");
            char[] chunk = new char[1 << 20];
            java.util.Arrays.fill(chunk, 'x');
            for (int i = 0; i < 40; i++) {
                out.write(chunk);
            }
            out.write("\n\t2331  GH100 [H100 PCIe]\n");
        }
        Path out = tmp.resolve("discover.out");
        try (DaemonProcess discover = DaemonProcess.startAsManifest(out, "discover", "--format", "json", "--no-nvml",
                "--host-root", root.toString(), "--pci-ids", pciIds.toString())) {
            assertThat(discover.awaitExit(300)).as(discover.output()).isZero();
            assertThat(discover.output()).doesNotContain("OutOfMemoryError").contains("\"skippedCount\":200000")
                    .contains(pciIds + ": line 2 is longer than 4096 characters, skipping it")
                    .contains("\"resource\":\"nvidia.com/GH100_H100_PCIE\"");
        }
    }

    /**
     * One serving daemon with the manifest's heap through both request floods, one after the other (a launch each
     * would prove no more): an Allocate of 120,000 container requests is refused and the next one answered; then
     * 3,200 ListAndWatch streams that never read and 32,000 Allocates sent at once are answered or refused
     * {@code RESOURCE_EXHAUSTED}, never run the heap out, and the daemon serves on.
     */
    @Test
    void aHugeAllocateAndFloodsOfAllocatesAndNeverReadingStreamsAreBoundedAndTheDaemonServesOnWithinTheHeap()
            throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        String vf = SysfsTree.vfAddress(CARD, 0);
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             DaemonProcess daemon = serveOneVf(dir);
             UnixDomainTransport client = UnixDomainTransport.create("flood", 1, 2)) {
            kubelet.await(Duration.ofSeconds(60), k -> k.streaming(P118));
            AllocateRequest.Builder huge = AllocateRequest.newBuilder();
            ContainerAllocateRequest one = ContainerAllocateRequest.newBuilder().addDevicesIds(vf).build();
            for (int i = 0; i < 120_000; i++) {
                huge.addContainerRequests(one);
            }

            assertThatThrownBy(() -> kubelet.allocate(P118, huge.build())).hasMessageContaining("INVALID_ARGUMENT");

            assertThat(kubelet.allocate(P118, List.of(vf)).getContainerResponsesCount()).isEqualTo(1);
            assertThat(daemon.process.isAlive()).isTrue();
            assertThat(daemon.output()).doesNotContain("OutOfMemoryError");

            Path socket = dir.resolve(new ResourceName("NVIDIA_H200X-1-18C").socketFileName());
            List<ManagedChannel> channels = new ArrayList<>();
            for (int c = 0; c < 32; c++) {
                channels.add(client.dial(socket));
            }
            // 3,200 ListAndWatch streams that never read, then 32,000 Allocates, all sent at once.
            for (ManagedChannel channel : channels) {
                for (int i = 0; i < 100; i++) {
                    DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), new NeverReads());
                }
            }
            AllocateFlood flood = AllocateFlood.forDevices(vf);
            int calls = 32_000;
            flood.send(channels, calls);
            await().atMost(Duration.ofMinutes(5)).until(() -> flood.answered() == calls || !daemon.process.isAlive());

            assertThat(daemon.process.isAlive()).as(daemon.output()).isTrue();
            assertThat(flood.codes()).as("%s", flood).isSubsetOf(Status.Code.OK, Status.Code.RESOURCE_EXHAUSTED);
            assertThat(flood.of(Status.Code.RESOURCE_EXHAUSTED)).as("%s", flood).isPositive();
            channels.forEach(ManagedChannel::shutdownNow);
            assertThat(kubelet.allocate(P118, List.of(vf)).getContainerResponsesCount()).isEqualTo(1);
            assertThat(kubelet.streaming(P118)).isTrue();
            assertThat(daemon.output()).doesNotContain("OutOfMemoryError");
        }
    }

    /** A ListAndWatch client that asks for no message at all. */
    private static final class NeverReads implements ClientResponseObserver<Empty, ListAndWatchResponse> {
        @Override
        public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
            requestStream.disableAutoRequestWithInitial(0);
        }

        @Override
        public void onNext(ListAndWatchResponse value) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }
    }

    /** The packaged daemon with the manifest's heap, serving one configured VF of an H200 card into {@code dir}. */
    private DaemonProcess serveOneVf(Path dir) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).virtualFunctions(2, 100).catalog(Map.of(1414L, "NVIDIA H200X-1-18C")).create();
        tree.configureVf(SysfsTree.vfAddress(CARD, 0), 1414).addGroupNode(100);
        return DaemonProcess.startAsManifest(tmp.resolve("daemon.log"), "serve", "--host-root", root.toString(),
                "--device-plugin-dir", dir.toString(), "--no-nvml", "--metrics-address", "", "--pci-ids",
                Files.writeString(tmp.resolve("pci.ids"), "").toString());
    }
}
