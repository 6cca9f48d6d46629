package dev.vgpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The simulator's driver rules, checked through its own answers and through the files a reader sees. */
class VgpuManagerSimulatorTest {

    static final String PF = "0000:41:00.0";
    static final String VF0 = "0000:41:00.4";
    static final String VF1 = "0000:41:00.5";
    static final String VF2 = "0000:41:00.6";
    static final String VF3 = "0000:41:00.7";
    static final long L40S_4Q = 1150;
    static final long L40S_12Q = 1153;
    static final long L40S_12A = 1163;
    static final long L40S_24Q = 1155;
    static final String HEADER_ONLY = "ID    : vGPU Name\n";

    @TempDir
    Path root;
    VgpuManagerSimulator host;

    @BeforeEach
    void fourVfs() {
        host = VgpuManagerSimulator.create(SysfsTree.at(root), SimulatedCard.l40s(PF).withTotalVfs(4));
    }

    static PciAddress at(String bdf) {
        return PciAddress.parse(bdf);
    }

    String read(String bdf, String file) throws IOException {
        return Files.readString(root.resolve("sys/bus/pci/devices").resolve(bdf).resolve(file),
                StandardCharsets.UTF_8);
    }

    @Test
    void writesTheCardAsTheDriverShowsIt() throws IOException {
        assertThat(host.tree().virtualFunctions(PF)).containsExactly(VF0, VF1, VF2, VF3);
        assertThat(read(PF, "sriov_totalvfs")).isEqualTo("4\n");
        assertThat(read(PF, "sriov_numvfs")).isEqualTo("4\n");
        assertThat(Files.readSymbolicLink(root.resolve("sys/bus/pci/devices/" + VF2 + "/physfn")).getFileName())
                .hasToString(PF);
        assertThat(read(VF2, "nvidia/current_vgpu_type")).isEqualTo("0\n");
        Map<Long, String> all = host.creatable(VF2);
        assertThat(all).hasSize(23).containsEntry(L40S_12Q, "NVIDIA L40S-12Q").containsEntry(2164L, "NVIDIA L40S-3B");
        assertThat(read(VF2, "nvidia/creatable_vgpu_types")).isEqualTo(SysfsTree.creatableTypesText(all))
                .startsWith(HEADER_ONLY + "1145  : NVIDIA L40S-1B\n");
        assertThat(read(PF, "nvidia/creatable_vgpu_types")).isEqualTo(SysfsTree.creatableTypesText(all));
        assertThat(VgpuManagerSimulator.isSimulated(root)).isTrue();
        assertThat(host.writeAttempts()).isZero();
    }

    @Test
    void aVgpuShrinksEverySiblingsListToItsSizeAndClearingItGrowsThemBack() throws IOException {
        host.writeType(at(VF0), L40S_12Q);

        assertThat(read(VF0, "nvidia/current_vgpu_type")).isEqualTo(L40S_12Q + "\n");
        assertThat(read(VF0, "nvidia/creatable_vgpu_types")).isEqualTo(HEADER_ONLY);
        assertThat(host.creatable(VF1)).containsOnlyKeys(L40S_12Q, L40S_12A);
        assertThat(read(VF3, "nvidia/creatable_vgpu_types")).isEqualTo(
                "ID    : vGPU Name\n1153  : NVIDIA L40S-12Q\n1163  : NVIDIA L40S-12A\n");
        assertThat(read(PF, "nvidia/creatable_vgpu_types")).isEqualTo(read(VF3, "nvidia/creatable_vgpu_types"));

        host.writeType(at(VF0), 0);

        assertThat(read(VF0, "nvidia/current_vgpu_type")).isEqualTo("0\n");
        assertThat(host.creatable(VF1)).hasSize(23);
        assertThat(read(VF0, "nvidia/creatable_vgpu_types")).isEqualTo(read(VF1, "nvidia/creatable_vgpu_types"));
    }

    @Test
    void aFullCardListsOnlyTheHeaderEverywhere() throws IOException {
        host.writeType(at(VF0), L40S_24Q);
        host.writeType(at(VF1), L40S_24Q);

        for (String function : List.of(PF, VF0, VF1, VF2, VF3)) {
            assertThat(read(function, "nvidia/creatable_vgpu_types")).as(function).isEqualTo(HEADER_ONLY);
        }
        assertThatThrownBy(() -> host.writeType(at(VF2), L40S_24Q)).isInstanceOf(FileSystemException.class)
                .hasMessageContaining("Invalid argument").hasMessageContaining("not creatable on " + VF2);
    }

    @Test
    void aTypeOfAnotherSizeIsRefusedAsTheKernelWouldAndChangesNothing() throws IOException {
        host.writeType(at(VF0), L40S_12Q);
        String before = read(VF1, "nvidia/creatable_vgpu_types");

        assertThatThrownBy(() -> host.writeType(at(VF1), L40S_4Q)).isInstanceOf(FileSystemException.class)
                .hasMessageContaining("nvidia/current_vgpu_type").hasMessageContaining("Invalid argument");

        assertThat(read(VF1, "nvidia/current_vgpu_type")).isEqualTo("0\n");
        assertThat(read(VF1, "nvidia/creatable_vgpu_types")).isEqualTo(before);
        assertThat(host.writeAttempts()).isEqualTo(2);
        assertThat(host.writeLog()).hasSize(2).last().asString()
                .startsWith("2 write 1150 to " + VF1 + "/nvidia/current_vgpu_type: refused: ");
    }

    @Test
    void aVfHoldingAVgpuMustBeClearedFirst() throws IOException {
        host.writeType(at(VF0), L40S_12Q);

        assertThatThrownBy(() -> host.writeType(at(VF0), L40S_12A)).hasMessageContaining("write 0 first");
        host.writeType(at(VF0), 0);
        host.writeType(at(VF0), L40S_12A);

        assertThat(host.vgpus(PF)).containsEntry(VF0, L40S_12A);
    }

    @Test
    void aVfAVmHoldsRefusesEveryWriteAndKeepsItsCardsVfsEnabled() throws IOException {
        host.writeType(at(VF1), L40S_12Q);
        host.hold(VF1).hold(VF2);

        assertThatThrownBy(() -> host.writeType(at(VF1), 0)).hasMessageContaining("Device or resource busy");
        assertThatThrownBy(() -> host.writeType(at(VF2), L40S_12Q)).hasMessageContaining("a VM holds");
        assertThatThrownBy(() -> host.writeVfCount(at(PF), 0)).hasMessageContaining("held by a VM");
        assertThat(host.vgpus(PF)).containsEntry(VF1, L40S_12Q).containsEntry(VF2, 0L);

        host.release(VF1).release(VF2);
        host.writeType(at(VF1), 0);
        host.writeVfCount(at(PF), 0);

        assertThat(host.vfCount(PF)).isZero();
    }

    @Test
    void enablingVfsCreatesTheirFunctionsAndDisablingRemovesThem() throws IOException {
        VgpuManagerSimulator bare = VgpuManagerSimulator.create(SysfsTree.at(root.resolve("bare")),
                SimulatedCard.l40s(PF).withTotalVfs(4).withEnabledVfs(0).withCatalogOnPf(false));
        SysfsTree tree = bare.tree();
        assertThat(tree.virtualFunctions(PF)).isEmpty();
        assertThat(Files.exists(tree.path("sys/bus/pci/devices/" + VF0))).isFalse();
        assertThat(Files.exists(tree.devicePath(PF).orElseThrow().resolve("nvidia/creatable_vgpu_types"))).isFalse();

        bare.writeVfCount(at(PF), 4);

        assertThat(tree.virtualFunctions(PF)).containsExactly(VF0, VF1, VF2, VF3);
        assertThat(Files.readString(tree.devicePath(VF3).orElseThrow().resolve("nvidia/creatable_vgpu_types")))
                .isEqualTo(SysfsTree.creatableTypesText(bare.creatable(VF3)));
        assertThat(Files.readString(tree.devicePath(PF).orElseThrow().resolve("sriov_numvfs"))).isEqualTo("4\n");
        assertThatThrownBy(() -> bare.writeVfCount(at(PF), 2)).hasMessageContaining("write 0 first");
        assertThatThrownBy(() -> bare.writeVfCount(at(PF), 5)).hasMessageContaining("at most 4 VFs");
        bare.writeVfCount(at(PF), 4);

        bare.writeType(at(VF2), L40S_4Q);
        assertThatThrownBy(() -> bare.writeVfCount(at(PF), 0)).hasMessageContaining(VF2 + " holds a vGPU");
        bare.writeType(at(VF2), 0);
        bare.writeVfCount(at(PF), 0);

        assertThat(tree.virtualFunctions(PF)).isEmpty();
        assertThat(Files.exists(tree.path("sys/bus/pci/devices/" + VF0))).isFalse();
        assertThat(Files.readString(tree.devicePath(PF).orElseThrow().resolve("sriov_numvfs"))).isEqualTo("0\n");
        assertThatThrownBy(() -> bare.writeType(at(VF0), L40S_4Q)).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void aRebootResetsEveryTypeAndDropsTheVfsOrKeepsThem() throws IOException {
        String everyType = read(PF, "nvidia/creatable_vgpu_types");
        host.writeType(at(VF0), L40S_12Q);
        host.writeType(at(VF3), L40S_12Q);
        host.hold(VF0);

        host.rebootKeepingVfs();

        assertThat(host.vgpus(PF)).containsOnly(Map.entry(VF0, 0L), Map.entry(VF1, 0L), Map.entry(VF2, 0L),
                Map.entry(VF3, 0L));
        assertThat(read(VF3, "nvidia/current_vgpu_type")).isEqualTo("0\n");
        assertThat(host.creatable(VF0)).hasSize(23);
        host.writeType(at(VF0), L40S_4Q);

        host.reboot();

        assertThat(host.vfCount(PF)).isZero();
        assertThat(host.tree().virtualFunctions(PF)).isEmpty();
        assertThat(read(PF, "sriov_numvfs")).isEqualTo("0\n");
        assertThat(read(PF, "nvidia/creatable_vgpu_types")).isEqualTo(everyType);
        assertThatThrownBy(() -> host.hold(VF0)).hasMessageContaining("no enabled VF");
    }

    @Test
    void anotherInstanceOrProcessContinuesWhereThisOneLeftOff() throws IOException {
        host.writeType(at(VF0), L40S_12Q);
        host.hold(VF0).failWrite(2, VgpuManagerSimulator.WriteFault.FAIL);

        VgpuManagerSimulator again = VgpuManagerSimulator.open(root);

        assertThat(again.vgpus(PF)).containsEntry(VF0, L40S_12Q);
        assertThat(again.writeAttempts()).isEqualTo(1);
        assertThatThrownBy(() -> again.writeType(at(VF0), 0)).hasMessageContaining("a VM holds");
        assertThatThrownBy(() -> again.writeType(at(VF1), L40S_12Q)).hasMessageContaining("injected fault");
        assertThat(host.writeAttempts()).isEqualTo(3);
        assertThat(host.writeLog()).hasSize(3);
    }

    @Test
    void injectedFaultsFailOrSwallowTheWriteTheyMeetAndNothingElse() throws IOException {
        host.failWrite(2, VgpuManagerSimulator.WriteFault.FAIL).failWrite(3, VgpuManagerSimulator.WriteFault.IGNORE);

        host.writeType(at(VF0), L40S_12Q);
        assertThatThrownBy(() -> host.writeType(at(VF1), L40S_12Q)).isInstanceOf(FileSystemException.class)
                .hasMessageContaining(VF1 + "/nvidia/current_vgpu_type").hasMessageContaining("Input/output error");
        host.writeType(at(VF1), L40S_12Q);
        host.writeType(at(VF2), L40S_12Q);

        assertThat(host.vgpus(PF)).containsEntry(VF0, L40S_12Q).containsEntry(VF1, 0L).containsEntry(VF2, L40S_12Q);
        assertThat(host.writeLog().get(2)).endsWith("ignored (injected)");

        host.failWritesFrom(2);
        host.writeType(at(VF3), L40S_12Q);
        assertThatThrownBy(() -> host.writeType(at(VF3), 0)).hasMessageContaining("injected");
        assertThatThrownBy(() -> host.writeType(at(VF3), 0)).hasMessageContaining("injected");
        host.clearFaults();
        host.writeType(at(VF3), 0);
        assertThat(host.vgpus(PF)).containsEntry(VF3, 0L);
    }

    @Test
    void aTypesOwnInstanceLimitCountsBesideTheFramebuffer() throws IOException {
        SimulatedCard card = SimulatedCard.of("0000:81:00.0", 0x2335, 141, 8, List.of(
                new SimulatedType(1414, "NVIDIA H200X-1-18C", 18, 2), SimulatedType.of(1428, "NVIDIA H200X-141C")));
        VgpuManagerSimulator h200 = VgpuManagerSimulator.create(SysfsTree.at(root.resolve("h200")), card);

        h200.writeType(at("0000:81:00.4"), 1414);
        assertThat(h200.creatable("0000:81:00.5")).containsOnlyKeys(1414L);
        h200.writeType(at("0000:81:00.5"), 1414);

        assertThat(h200.creatable("0000:81:00.6")).isEmpty();
    }

    @Test
    void aRootWithoutStateOrWithAnotherFileIsNoSimulatedHost() throws IOException {
        Path other = root.resolve("other");
        assertThatThrownBy(() -> VgpuManagerSimulator.open(other)).isInstanceOf(NoSuchFileException.class);
        assertThat(VgpuManagerSimulator.isSimulated(other)).isFalse();

        Files.writeString(root.resolve(VgpuManagerSimulator.STATE_FILE), "vgpu-simulator v1\ncard\tx\n");
        assertThatThrownBy(() -> VgpuManagerSimulator.open(root)).isInstanceOf(IOException.class)
                .hasMessageContaining("card x");
        Files.writeString(root.resolve(VgpuManagerSimulator.STATE_FILE), "something else\n");
        assertThatThrownBy(() -> VgpuManagerSimulator.open(root)).hasMessageContaining("not a simulator state");
    }

    @Test
    void runsOnJimfsToo() throws Exception {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            VgpuManagerSimulator memory = VgpuManagerSimulator.create(SysfsTree.at(fs.getPath("/host")),
                    SimulatedCard.l40s(PF).withTotalVfs(2).withEnabledVfs(0));
            memory.writeVfCount(at(PF), 2);
            memory.writeType(at(VF1), L40S_24Q);
            memory.reboot();

            assertThat(memory.vfCount(PF)).isZero();
            assertThat(VgpuManagerSimulator.open(fs.getPath("/host")).writeAttempts()).isEqualTo(2);
        }
    }

    @Test
    void cardsAreCheckedWhenMade() {
        assertThatThrownBy(() -> SimulatedCard.l40s(PF).withEnabledVfs(3)).hasMessageContaining("0 or all 16");
        assertThatThrownBy(() -> SimulatedCard.of(PF, 0x2335, 8, 4, List.of(SimulatedType.of(1, "NVIDIA X-16Q"))))
                .hasMessageContaining("takes more than card");
        assertThatThrownBy(() -> SimulatedType.of(1, "NVIDIA X")).hasMessageContaining("states no framebuffer size");
        assertThatThrownBy(() -> VgpuManagerSimulator.create(SysfsTree.at(root.resolve("twice")),
                SimulatedCard.l40s(PF), SimulatedCard.l40s(PF))).hasMessageContaining("given twice");
    }
}
