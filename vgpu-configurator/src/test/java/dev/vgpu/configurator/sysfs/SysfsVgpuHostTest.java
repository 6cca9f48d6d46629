package dev.vgpu.configurator.sysfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import dev.vgpu.configurator.CardFacts;
import dev.vgpu.configurator.HostFacts;
import dev.vgpu.configurator.VfFacts;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The sysfs reader and writer on real-layout trees. */
class SysfsVgpuHostTest {

    static final String A = "0000:1b:00.0";
    static final String B = "0000:9b:00.0";
    static final String A0 = "0000:1b:00.4";
    static final String A1 = "0000:1b:00.5";
    static final Map<Long, String> H200 = Map.of(1414L, "NVIDIA H200X-1-18C", 1428L, "NVIDIA H200X-141C");

    @TempDir
    Path root;

    SysfsTree tree() {
        return SysfsTree.at(root);
    }

    static PciAddress at(String bdf) {
        return PciAddress.parse(bdf);
    }

    /** Two cards, and functions that are not cards: a passthrough GPU, a GPU without SR-IOV, a NIC with SR-IOV. */
    SysfsTree host() {
        SysfsTree t = tree();
        t.sriovCard(B, 0x2335).virtualFunctions(2, 200).catalog(H200).create();
        t.sriovCard(A, 0x2335).virtualFunctions(3, 100).catalog(H200).create();
        t.configureVf(A1, 1414).rewriteCatalog(A1, Map.of());
        t.passthroughGpu("0000:41:00.0", 0x2331).iommuGroup(41).create();
        t.nvidiaGpu("0000:06:00.0", 0x2236).create();
        t.function("0000:3b:00.0", 0x8086, 0x1572).driver("i40e").create()
                .writeAttribute("0000:3b:00.0", "sriov_totalvfs", "64\n");
        t.sriovCard("0000:c1:00.0", 0x2335).virtualFunctions(1, 300).create().bindDriver("0000:c1:00.0", "vfio-pci");
        return t;
    }

    @Test
    void readsEveryCardInAddressOrderWithItsVfsTypesAndCatalogs() throws IOException {
        host();

        HostFacts facts = SysfsVgpuHost.at(root).read(Set.of(at(A1)));

        assertThat(facts.cards()).extracting(CardFacts::pf).containsExactly(at(A), at(B));
        CardFacts a = facts.cards().get(0);
        assertThat(a.problems()).isEmpty();
        assertThat(a.deviceId()).isEqualTo(0x2335);
        assertThat(a.deviceVendorId()).isEqualTo(0x233510deL);
        assertThat(a.totalVfs()).isEqualTo(3);
        assertThat(a.numVfs()).isEqualTo(3);
        assertThat(a.vfs()).extracting(VfFacts::address).containsExactly(at(A0), at(A1), at("0000:1b:00.6"));
        assertThat(a.vfs()).extracting(VfFacts::index).containsExactly(0, 1, 2);
        assertThat(a.vfs()).extracting(VfFacts::typeId).containsExactly(0L, 1414L, 0L);
        assertThat(a.vfs()).extracting(VfFacts::inUse).containsExactly(false, true, false);
        assertThat(a.vfs().get(0).creatable()).isEqualTo(H200);
        assertThat(a.vfs().get(1).creatable()).isEmpty();
        assertThat(a.types().names()).isEqualTo(H200);
        assertThat(a.types().complete()).isFalse();
        assertThat(facts.cards().get(1).types().complete()).isTrue();
        assertThat(facts.cards().get(1).types().framebufferGb()).hasValue(141);
    }

    @Test
    void namesAResolverGivesAreAddedButNeverMakeTheTableComplete() throws IOException {
        host().rewriteCardCatalogs(A, Map.of()).writeAttribute(A0, "nvidia/creatable_vgpu_types",
                "ID    : vGPU Name\n1416  : NVIDIA H200X-2-35C\n1416  : NVIDIA H200X-3-71C\n");

        CardFacts a = SysfsVgpuHost.at(root, pf -> pf.equals(at(A))
                ? VgpuTypeNames.of(Map.of(1414L, "NVIDIA H200X-1-18C", 1428L, "NVIDIA  H200X-141C"))
                : VgpuTypeNames.failed("not asked")).readCard(at(A), Set.of());

        assertThat(a.types().names()).containsOnlyKeys(1414L, 1428L);
        assertThat(a.types().ambiguous()).containsExactly(1416L);
        assertThat(a.types().complete()).isFalse();
        assertThat(a.types().describe(1416)).isEqualTo("type 1416");
    }

    @Test
    void whatCannotBeReadBecomesAProblemOfItsCardNamingTheFile() throws IOException {
        SysfsTree t = host();
        t.writeAttribute(A0, "nvidia/current_vgpu_type", "1414\u202e\n");
        t.delete(t.devicePath(A1).orElseThrow().resolve("nvidia").toString().substring(root.toString().length() + 1));
        t.writeAttribute(B, "sriov_numvfs", "3\n");

        HostFacts facts = SysfsVgpuHost.at(root).read(Set.of());

        assertThat(facts.cards().get(0).problems()).containsExactly(
                "VF 0000:1b:00.4: nvidia/current_vgpu_type cannot be read: current_vgpu_type is not a decimal"
                        + " number: \"1414\\u202e\"",
                "VF 0000:1b:00.5 has no nvidia/current_vgpu_type, so it is not a vendor-VFIO vGPU VF (no such file "
                        + root.resolve("sys/bus/pci/devices/" + A1 + "/nvidia/current_vgpu_type") + ")");
        assertThat(facts.cards().get(1).problems()).containsExactly("sriov_numvfs says 3 but it links 2 VFs"
                + " (virtfnN)");
    }

    @Test
    @Timeout(60) // a guard: a reader that opened the FIFO would wait for a writer forever
    void aFifoOrADirectoryWhereAnAttributeBelongsIsAProblemNeverAWait() throws Exception {
        SysfsTree t = host();
        Path type = t.devicePath(A0).orElseThrow().resolve("nvidia/current_vgpu_type");
        Files.delete(type);
        Process mkfifo = new ProcessBuilder("mkfifo", type.toString()).start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        Path catalog = t.devicePath(A1).orElseThrow().resolve("nvidia/creatable_vgpu_types");
        Files.delete(catalog);
        Files.createDirectory(catalog);

        CardFacts a = SysfsVgpuHost.at(root).readCard(at(A), Set.of());

        assertThat(a.problems()).containsExactly(
                "VF 0000:1b:00.4: nvidia/current_vgpu_type cannot be read: current_vgpu_type is not a regular file",
                "0000:1b:00.5: nvidia/creatable_vgpu_types cannot be read: creatable_vgpu_types is not a regular"
                        + " file");
    }

    @Test
    void aCatalogLineThatIsNoRowIsLoggedEscapedAndLeftOut() throws IOException {
        host().writeAttribute(A0, "nvidia/creatable_vgpu_types", "ID    : vGPU Name\n1414  : NVIDIA H200X-1-18C\n"
                + "garbage\u001b[31m\n");

        CapturedStderr.Outcome<CardFacts> read = CapturedStderr.withAnswer(() -> {
            try {
                return SysfsVgpuHost.at(root).readCard(at(A), Set.of());
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });

        assertThat(read.answer().problems()).isEmpty();
        assertThat(read.answer().vf(at(A0)).orElseThrow().creatable()).containsOnlyKeys(1414L);
        assertThat(read.log()).contains("WARN", "nvidia/creatable_vgpu_types of 0000:1b:00.4 has a line",
                "\"garbage\\u001b[31m\"");
    }

    @Test
    void aFunctionThatIsNoCardIsNoSuchCard() {
        host();
        SysfsVgpuHost host = SysfsVgpuHost.at(root);

        assertThatThrownBy(() -> host.readCard(at("0000:77:00.0"), Set.of())).isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("the host has no PCI function 0000:77:00.0");
        for (String notACard : new String[] {"0000:41:00.0", "0000:06:00.0", "0000:3b:00.0", "0000:c1:00.0", A0}) {
            assertThatThrownBy(() -> host.readCard(at(notACard), Set.of())).as(notACard)
                    .isInstanceOf(NoSuchFileException.class).hasMessageContaining("is not an NVIDIA SR-IOV physical"
                            + " function on the nvidia driver");
        }
    }

    @Test
    void writesTheNumberAndALineEndAndNeverCreatesAFile() throws IOException {
        SysfsTree t = host();
        SysfsVgpuHost host = SysfsVgpuHost.at(root);

        host.writeType(at(A0), 1428);
        host.writeVfCount(at(B), 0);

        assertThat(Files.readString(t.devicePath(A0).orElseThrow().resolve("nvidia/current_vgpu_type")))
                .isEqualTo("1428\n");
        assertThat(Files.readString(t.devicePath(B).orElseThrow().resolve("sriov_numvfs"))).isEqualTo("0\n");
        assertThatThrownBy(() -> host.writeType(at("0000:1b:01.7"), 1)).isInstanceOf(NoSuchFileException.class);
        assertThat(Files.exists(root.resolve("sys/bus/pci/devices/0000:1b:01.7"))).isFalse();
        assertThatThrownBy(() -> host.writeType(at(A0), -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRootWithoutAPciBusCannotBeRead() {
        assertThatThrownBy(() -> SysfsVgpuHost.at(root.resolve("nothing")).read(Set.of()))
                .isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void cardsAreNumberedInAddressOrderAcrossDomains() throws IOException {
        SysfsTree t = tree();
        t.sriovCard("0001:01:00.0", 0x2335).virtualFunctions(1, 10).create();
        t.sriovCard("0000:ff:00.0", 0x2335).virtualFunctions(1, 20).create();
        t.sriovCard("0000:0a:00.0", 0x2335).virtualFunctions(1, 30).create();

        assertThat(SysfsVgpuHost.at(root).read(Set.of()).cards()).extracting(card -> card.pf().toString())
                .containsExactly("0000:0a:00.0", "0000:ff:00.0", "0001:01:00.0");
    }

    @Test
    void readsJimfsTreesToo() throws Exception {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            SysfsTree t = SysfsTree.at(fs.getPath("/host"));
            t.sriovCard(A, 0x2335).virtualFunctions(2, 100).catalog(H200).create();

            CardFacts a = SysfsVgpuHost.at(t.root()).readCard(at(A), Set.of());

            assertThat(a.vfs()).hasSize(2);
            assertThat(a.types().names()).isEqualTo(H200);
        }
    }
}
