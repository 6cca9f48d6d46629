package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.core.spi.StateDirectory;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.testing.SysfsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Learned profile names in a state directory: a card that filled up while one source instance ran is still named
 * by a new instance (a restart) with the same directory and no resolver, for the same card, device id and driver
 * version only.
 */
class LearnedNamesAcrossRestartsTest extends SourceTestBase {

    static final String CARD = "0000:1b:00.0";
    static final String VF0 = SysfsTree.vfAddress(CARD, 0);
    static final String VF1 = SysfsTree.vfAddress(CARD, 1);
    static final String VF2 = SysfsTree.vfAddress(CARD, 2);
    static final Map<Long, String> L40S = Map.of(1152L, "NVIDIA L40S-1Q", 1153L, "NVIDIA L40S-2Q",
            1155L, "NVIDIA L40S-4Q");
    static final Map<String, List<String>> ALL_THREE = Map.of("NVIDIA_L40S-1Q", List.of(VF0),
            "NVIDIA_L40S-4Q", List.of(VF1), "NVIDIA_L40S-2Q", List.of(VF2));

    Path state;

    @Override
    Path newRoot() {
        return tempDir.resolve("host");
    }

    @BeforeEach
    void stateDirectory() {
        state = tempDir.resolve("state");
    }

    Host withState() {
        return host().withStateDirectory(state);
    }

    Host readingState() {
        return host().withStateDirectory(StateDirectory.forReading(state));
    }

    /** The first life: the card lists its types; a source with the state directory learns them. */
    void learnWhileTheCardListsItsTypes(String driverVersion) {
        if (driverVersion != null) {
            tree.nvidiaDriverVersion(driverVersion);
        }
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(3, 100).catalog(L40S).create();
        tree.configureVf(VF0, 1152).configureVf(VF1, 1155);
        assertThat(resources(scan(new VendorVfioSource(), withState())))
                .containsOnlyKeys("NVIDIA_L40S-1Q", "NVIDIA_L40S-4Q");
    }

    /** The last VF is configured: every catalog of the card drops to its header. */
    void fillTheCard() {
        tree.configureVf(VF2, 1153).rewriteCardCatalogs(CARD, Map.of());
    }

    Map<TypeNameMemory.Card, Map<Long, String>> stored() {
        LearnedNamesFile.Contents contents = LearnedNamesFile.read(state);
        assertThat(contents.problem()).isEmpty();
        return contents.names();
    }

    @Test
    void aFullCardIsStillNamedAfterARestartWithTheSameStateDirectory() {
        learnWhileTheCardListsItsTypes("550.54.14");
        fillTheCard();

        assertThat(resources(scan(new VendorVfioSource(), withState()))).isEqualTo(ALL_THREE);
        assertThat(scan(new VendorVfioSource(), host()).devices()).as("without the state directory").isEmpty();
        assertThat(stored()).isEqualTo(Map.of(new TypeNameMemory.Card(PciAddress.parse(CARD), "26b9", "550.54.14"),
                L40S));
    }

    @Test
    void namesTheResolverGaveAreKeptToo() {
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(1, 100).catalog(Map.of()).create();
        tree.configureVf(VF0, 1155);
        Host nvml = withState().withVgpuTypes(pf -> VgpuTypeNames.of(L40S));
        assertThat(resources(scan(new VendorVfioSource(), nvml))).containsOnlyKeys("NVIDIA_L40S-4Q");

        assertThat(resources(scan(new VendorVfioSource(), withState()))).containsOnlyKeys("NVIDIA_L40S-4Q");
    }

    @Test
    void aDriverUpgradeForgetsTheNamesAndTheFileForgetsThemToo() {
        learnWhileTheCardListsItsTypes("550.54.14");
        fillTheCard();
        tree.nvidiaDriverVersion("550.90.07");

        Discovery upgraded = scan(new VendorVfioSource(), withState());

        assertThat(upgraded.devices()).isEmpty();
        assertThat(skips(upgraded).get(VF0)).contains("no name was learned for it on this card earlier");
        assertThat(stored()).isEmpty();
        tree.nvidiaDriverVersion("550.54.14");
        assertThat(scan(new VendorVfioSource(), withState()).devices()).as("forgotten for good").isEmpty();
    }

    @Test
    void anotherCardInTheSameSlotForgetsTheNames() {
        learnWhileTheCardListsItsTypes("550.54.14");
        tree.sriovCard(CARD, 0x26ba).virtualFunctions(3, 100).catalog(Map.of()).create();
        tree.configureVf(VF0, 1152).configureVf(VF1, 1155).configureVf(VF2, 1153);

        Discovery other = scan(new VendorVfioSource(), withState());

        assertThat(other.devices()).isEmpty();
        assertThat(skips(other)).containsOnlyKeys(VF0, VF1, VF2);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        "-         | -         | true",
        "-         | 550.54.14 | false",
        "550.54.14 | -         | false",
        "550.54.14 | 550.54.14 | true",
    })
    void anUnknownDriverVersionMatchesOnlyAnUnknownOne(String before, String after, boolean named) {
        learnWhileTheCardListsItsTypes(before);
        fillTheCard();
        if (after == null) {
            tree.delete("sys/module/nvidia/version");
        } else {
            tree.nvidiaDriverVersion(after);
        }

        Map<String, List<String>> found = resources(scan(new VendorVfioSource(), withState()));

        assertThat(found).isEqualTo(named ? ALL_THREE : Map.of());
    }

    @Test
    void aDriverVersionThatCannotBeReadNeitherNamesNorForgets() {
        learnWhileTheCardListsItsTypes("550.54.14");
        fillTheCard();
        Map<TypeNameMemory.Card, Map<Long, String>> before = stored();
        tree.delete("sys/module/nvidia/version").mkdirs("sys/module/nvidia/version");

        Discovery unreadable = scan(new VendorVfioSource(), withState());

        assertThat(unreadable.devices()).isEmpty();
        assertThat(skips(unreadable).get(VF0)).contains("no name learned earlier is used since the driver version");
        assertThat(stored()).isEqualTo(before);
        tree.delete("sys/module/nvidia/version").nvidiaDriverVersion("550.54.14");
        assertThat(resources(scan(new VendorVfioSource(), withState()))).isEqualTo(ALL_THREE);
    }

    @Test
    void aCorruptStateFileIsIgnoredAndReplacedOnceNamesAreLearned() throws IOException {
        Files.createDirectories(state);
        Files.writeString(state.resolve(LearnedNamesFile.FILE), "{\"not\": \"ours\"}\n");
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(3, 100).catalog(Map.of()).create();
        tree.configureVf(VF0, 1152);
        assertThat(scan(new VendorVfioSource(), withState()).devices()).as("a full card, nothing learned").isEmpty();
        assertThat(LearnedNamesFile.read(state).problem()).as("not rewritten while nothing changed").isPresent();

        tree.rewriteCardCatalogs(CARD, L40S);
        assertThat(resources(scan(new VendorVfioSource(), withState()))).containsOnlyKeys("NVIDIA_L40S-1Q");

        assertThat(stored()).containsOnlyKeys(new TypeNameMemory.Card(PciAddress.parse(CARD), "26b9", "unknown"));
        tree.rewriteCardCatalogs(CARD, Map.of());
        assertThat(resources(scan(new VendorVfioSource(), withState()))).containsOnlyKeys("NVIDIA_L40S-1Q");
    }

    @Test
    void theFileIsWrittenWhenTheNamesChangeNotAtEveryScan() throws IOException {
        VendorVfioSource source = new VendorVfioSource();
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(3, 100).catalog(L40S).create();
        tree.configureVf(VF0, 1152);
        scan(source, withState());
        Files.delete(state.resolve(LearnedNamesFile.FILE));

        scan(source, withState());
        assertThat(state.resolve(LearnedNamesFile.FILE)).as("same names: not written again").doesNotExist();

        tree.rewriteCardCatalogs(CARD, Map.of(1152L, "NVIDIA L40S-1B"));
        scan(source, withState());
        assertThat(stored().values()).containsExactly(Map.of(1152L, "NVIDIA L40S-1B", 1153L, "NVIDIA L40S-2Q",
                1155L, "NVIDIA L40S-4Q"));
    }

    @Test
    void aCardThatAWholeScanNoLongerSeesIsForgottenInTheFile() {
        VendorVfioSource source = new VendorVfioSource();
        learnWhileTheCardListsItsTypes("550.54.14");
        tree.removeFunction(VF0).removeFunction(VF1).removeFunction(VF2).removeFunction(CARD);

        scan(source, withState());

        assertThat(stored()).isEmpty();
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(3, 100).catalog(Map.of()).create();
        tree.configureVf(VF0, 1152);
        assertThat(scan(new VendorVfioSource(), withState()).devices()).isEmpty();
    }

    @Test
    void aStateDirectoryForReadingIsReadButNeverWrittenNorCreated() throws IOException {
        learnWhileTheCardListsItsTypes("550.54.14");
        fillTheCard();
        byte[] before = Files.readAllBytes(state.resolve(LearnedNamesFile.FILE));

        assertThat(resources(scan(new VendorVfioSource(), readingState()))).isEqualTo(ALL_THREE);
        tree.nvidiaDriverVersion("550.90.07");
        assertThat(scan(new VendorVfioSource(), readingState()).devices()).isEmpty();

        assertThat(Files.readAllBytes(state.resolve(LearnedNamesFile.FILE))).isEqualTo(before);
        Path missing = tempDir.resolve("never-made");
        scan(new VendorVfioSource(), host().withStateDirectory(StateDirectory.forReading(missing)));
        assertThat(missing).doesNotExist();
    }
}
