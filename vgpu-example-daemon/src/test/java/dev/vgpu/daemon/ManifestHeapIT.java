package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.deviceplugin.kubelet.StandInKubelet;
import dev.vgpu.deviceplugin.v1beta1.AllocateRequest;
import dev.vgpu.deviceplugin.v1beta1.ContainerAllocateRequest;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory cases of the fault suite (docs/RELIABILITY.md) against the packaged daemon with the heap and stack
 * of deploy/base/daemonset.yaml: 100,000 dangling bus entries, and one Allocate of 120,000 container requests.
 * Each must leave the process alive (or exit 0), answer with a bounded result, and never run out of heap.
 */
@Tag("reliability")
class ManifestHeapIT {

    private static final String CARD = "0000:1b:00.0";
    private static final String P118 = "nvidia.com/NVIDIA_H200X-1-18C";

    @TempDir
    Path tmp;

    @Test
    void aHundredThousandDanglingBusEntriesAreCountedWithinTheManifestsHeap() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path bus = Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        for (int i = 0; i < 100_000; i++) {
            String bdf = String.format(Locale.ROOT, "%04x:%02x:%02x.%d", i >> 16, (i >> 8) & 0xff, (i >> 3) & 0x1f,
                    i & 7);
            Files.createSymbolicLink(bus.resolve(bdf), Path.of("../../../devices/gone/" + bdf));
        }
        Path out = tmp.resolve("discover.out");
        try (DaemonProcess discover = DaemonProcess.start(DaemonProcess.manifestJvmOptions(),
                DaemonProcess.jar().toString(), out, "discover", "--format", "json", "--no-nvml", "--host-root",
                root.toString(), "--pci-ids", Files.writeString(tmp.resolve("pci.ids"), "").toString())) {
            assertThat(discover.awaitExit(300)).as(discover.output()).isZero();
            String output = discover.output();
            assertThat(output).doesNotContain("OutOfMemoryError").contains("\"skippedCount\":200000");
        }
    }

    @Test
    void aFortyMegabyteLineInPciIdsIsSkippedNamingTheFileWithinTheManifestsHeap() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        SysfsTree.at(root).passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).create();
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
        try (DaemonProcess discover = DaemonProcess.start(DaemonProcess.manifestJvmOptions(),
                DaemonProcess.jar().toString(), out, "discover", "--format", "json", "--no-nvml", "--host-root",
                root.toString(), "--pci-ids", pciIds.toString())) {
            assertThat(discover.awaitExit(300)).as(discover.output()).isZero();
            assertThat(discover.output()).doesNotContain("OutOfMemoryError")
                    .contains(pciIds + ": line 2 is longer than 4096 characters, skipping it")
                    .contains("\"resource\":\"nvidia.com/GH100_H100_PCIE\"");
        }
    }

    @Test
    void anAllocateOfAHundredTwentyThousandContainersIsRefusedAndTheDaemonServesOn() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host"));
        Path dir = Files.createDirectories(tmp.resolve("device-plugins"));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x2335).virtualFunctions(2, 100).catalog(Map.of(1414L, "NVIDIA H200X-1-18C")).create();
        String vf = SysfsTree.vfAddress(CARD, 0);
        tree.configureVf(vf, 1414).addGroupNode(100);
        try (StandInKubelet kubelet = StandInKubelet.start(dir);
             DaemonProcess daemon = DaemonProcess.start(DaemonProcess.manifestJvmOptions(),
                     DaemonProcess.jar().toString(), tmp.resolve("daemon.log"), "serve", "--host-root",
                     root.toString(), "--device-plugin-dir", dir.toString(), "--no-nvml", "--metrics-address", "",
                     "--pci-ids", Files.writeString(tmp.resolve("pci.ids"), "").toString())) {
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
        }
    }
}
