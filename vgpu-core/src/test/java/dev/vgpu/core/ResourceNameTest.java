package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The naming rules of docs/HOST-FACTS.md §2.1-2.4, trap 13-15. Expected values of the
 * source-specific steps are what upstream's Go code produces (checked with Go 1.19.8's {@code strings.ToUpper},
 * {@code strings.TrimSpace} and {@code regexp} {@code \s+}); the final sanitization is ours.
 */
class ResourceNameTest {

    static final Pattern VALID = Pattern.compile("^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$");

    static Stream<Arguments> pciDeviceNames() {
        return Stream.of(
                // docs/HOST-FACTS.md §2.1 worked examples (repo pci.ids)
                Arguments.of("GH100 [H200 SXM 141GB]", "2335", "GH100_H200_SXM_141GB"),
                Arguments.of("AD102GL [L40S]", "26b9", "AD102GL_L40S"),
                Arguments.of("GA102GL [A10]", "2236", "GA102GL_A10"),
                Arguments.of("TU104GL [Tesla T4]", "1eb8", "TU104GL_TESLA_T4"),
                Arguments.of("GH100 [H100 PCIe]", "2331", "GH100_H100_PCIE"),
                Arguments.of("GA100 [A100-SXM-64GB]", "20b3", "GA100_A100SXM64GB"),
                // whitespace: trimmed, runs (spaces, tabs) become one underscore
                Arguments.of("  GH100   [H200  SXM\t141GB]  ", "2335", "GH100_H200_SXM_141GB"),
                // '.' and '/' become '_' before whitespace is joined, so runs of '_' survive
                Arguments.of("TU102 [GeForce RTX 2080 Ti Rev. A]", "1e07", "TU102_GEFORCE_RTX_2080_TI_REV__A"),
                Arguments.of("GP104GL [Quadro P4000/P5000]", "1bb1", "GP104GL_QUADRO_P4000_P5000"),
                // leading and trailing underscores are dropped by the final sanitization
                Arguments.of("[H200]", "2335", "H200"),
                // a name made only of removed characters falls back to the device id (trap 16)
                Arguments.of("[+]", "2335", "2335"),
                Arguments.of("()-+", "2335", "2335"),
                Arguments.of("   ", "2335", "2335"),
                Arguments.of("", "2335", "2335"),
                Arguments.of(null, "2335", "2335"),
                Arguments.of(null, "2ABC", "2abc"),
                Arguments.of("Ĳ ß", "2335", "2335"),
                // Go's ToUpper maps one character at a time: ß stays ß (then dropped), ı becomes I, ſ becomes S
                Arguments.of("straße ﬁ ǰ ı ſ", "2335", "STRAE___I_S"),
                // RE2's \s has no vertical tab and no Unicode spaces: they are simply dropped
                Arguments.of("A\u000bB", "2335", "AB"),
                Arguments.of("A\u00a0B", "2335", "AB"),
                // hostile input
                Arguments.of("../../etc/passwd", "2335", "ETC_PASSWD"),
                Arguments.of("x\u0000y", "2335", "XY"),
                Arguments.of("日本語", "2335", "2335"),
                Arguments.of("A".repeat(200), "2335", "A".repeat(63)),
                Arguments.of("A".repeat(62) + " B", "2335", "A".repeat(62)));
    }

    @ParameterizedTest(name = "[{index}] \"{0}\" / {1} -> {2}")
    @MethodSource("pciDeviceNames")
    void passthroughNamesFollowThePciIdsRule(String pciIdsName, String deviceId, String expected) {
        assertThat(ResourceName.forPciDeviceName(pciIdsName, deviceId)).map(ResourceName::name).contains(expected);
    }

    @ParameterizedTest(name = "no name and device id \"{0}\" -> empty")
    @NullAndEmptySource
    @ValueSource(strings = {"23351", "233", "xyz1", "../1", "23 5", "0x2335", "２３３５"})
    void withoutANameAnInvalidDeviceIdGivesNothing(String deviceId) {
        assertThat(ResourceName.forPciDeviceName(null, deviceId)).isEmpty();
        assertThat(ResourceName.forPciDeviceName("[]", deviceId)).isEmpty();
    }

    static Stream<Arguments> profileNames() {
        return Stream.of(
                // docs/HOST-FACTS.md §2.2 / §2.3 worked examples
                Arguments.of("GRID T4-1Q", "GRID_T4-1Q"),
                Arguments.of("NVIDIA A10-8Q", "NVIDIA_A10-8Q"),
                Arguments.of("NVIDIA L40S-1Q", "NVIDIA_L40S-1Q"),
                Arguments.of("NVIDIA H200X-1-18C", "NVIDIA_H200X-1-18C"),
                Arguments.of("NVIDIA H200X-141C", "NVIDIA_H200X-141C"),
                Arguments.of("NVIDIA RTX Pro 6000 Blackwell DC-1-2Q", "NVIDIA_RTX_Pro_6000_Blackwell_DC-1-2Q"),
                // as read from sysfs, with the trailing newline
                Arguments.of("NVIDIA A2-1B\n", "NVIDIA_A2-1B"),
                // several spaces, tabs and mixed runs become one underscore
                Arguments.of("NVIDIA  L40S-1Q", "NVIDIA_L40S-1Q"),
                Arguments.of("NVIDIA\tL40S-1Q", "NVIDIA_L40S-1Q"),
                Arguments.of("NVIDIA RTX  Pro \t 6000   Blackwell DC-1-2Q", "NVIDIA_RTX_Pro_6000_Blackwell_DC-1-2Q"),
                Arguments.of("  GRID T4-1Q  ", "GRID_T4-1Q"),
                // case and dots are kept
                Arguments.of("Grid t4-1q", "Grid_t4-1q"),
                Arguments.of("nvidia-a10.8q", "nvidia-a10.8q"),
                // Unicode spaces are not whitespace runs (RE2) and are dropped with other characters
                Arguments.of("NVIDIA\u00a0L40S-1Q", "NVIDIAL40S-1Q"),
                Arguments.of("NVIDIA\u2003L40S-1Q", "NVIDIAL40S-1Q"),
                // hostile input: separators, dot runs, NUL, control characters, edges
                Arguments.of("GRID T4-1Q/../../x", "GRID_T4-1Q.x"),
                Arguments.of("../../../tmp/evil", "tmpevil"),
                Arguments.of("a..b", "a.b"),
                Arguments.of("a....b", "a.b"),
                Arguments.of("a . . b", "a_._._b"),
                Arguments.of("GRID T4-1Q\u0000", "GRID_T4-1Q"),
                Arguments.of("GRID\u0000T4", "GRIDT4"),
                Arguments.of("a\\b", "ab"),
                Arguments.of("C:\\x", "Cx"),
                Arguments.of("-GRID T4-1Q-", "GRID_T4-1Q"),
                Arguments.of("_.-x-._", "x"),
                Arguments.of("x".repeat(200), "x".repeat(63)),
                Arguments.of("x".repeat(62) + "-y", "x".repeat(62)),
                Arguments.of("é" + "x".repeat(70), "x".repeat(63)));
    }

    @ParameterizedTest(name = "[{index}] \"{0}\" -> {1}")
    @MethodSource("profileNames")
    void mdevAndVendorVfioNamesJoinWhitespaceRuns(String raw, String expected) {
        assertThat(ResourceName.forMdevType(raw)).map(ResourceName::name).contains(expected);
        assertThat(ResourceName.forVgpuProfile(raw)).map(ResourceName::name).contains(expected);
    }

    @ParameterizedTest(name = "\"{0}\" sanitizes to nothing")
    @NullAndEmptySource
    @ValueSource(strings = {" ", "\t\n", "..", "...", "-", "_", "._-", "/", "../..", "\u0000", "日本語", "🙂🙂",
            "\u00a0", "-.-", "_ _"})
    void namesThatSanitizeToNothingAreEmpty(String raw) {
        assertThat(ResourceName.sanitize(raw)).isEmpty();
        assertThat(ResourceName.forMdevType(raw)).isEmpty();
        assertThat(ResourceName.forVgpuProfile(raw)).isEmpty();
        assertThat(ResourceName.forPciDeviceName(raw, null)).isEmpty();
    }

    @ParameterizedTest(name = "sanitize \"{0}\" -> {1}")
    @CsvSource(delimiter = '|', value = {
            "GRID T4-1Q      | GRIDT4-1Q",
            "a/b             | ab",
            "...a...         | a",
            "a.-.b           | a.-.b",
            "0               | 0",
            "A_b-C.d         | A_b-C.d",
    })
    void theFinalSanitizationDropsWhatItCannotKeep(String raw, String expected) {
        assertThat(ResourceName.sanitize(raw)).map(ResourceName::name).contains(expected);
    }

    @ParameterizedTest(name = "new ResourceName(\"{0}\") is rejected")
    @NullAndEmptySource
    @ValueSource(strings = {"a..b", "..", "-a", "a-", "_a", "a_", ".a", "a.", "a b", "a/b", "a\\b", "a\u0000b",
            "é", "a\nb", "nvidia.com/a"})
    void theConstructorRejectsUnsanitizedNames(String name) {
        assertThatThrownBy(() -> new ResourceName(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid resource name");
    }

    @Test
    void theConstructorEnforcesTheLengthLimit() {
        assertThat(new ResourceName("a".repeat(63)).name()).hasSize(63);
        assertThatThrownBy(() -> new ResourceName("a".repeat(64))).isInstanceOf(IllegalArgumentException.class);
        assertThat(new ResourceName("a").name()).isEqualTo("a");
    }

    @ParameterizedTest(name = "{0} ({1}) -> {2}")
    @CsvSource({
            // docs/HOST-FACTS.md §2.4: KubeVirt's rule, uppercase with '/' and '.' -> '_'; '-' survives
            "NVIDIA_L40S-1Q,       VFIO_PCI, PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q",
            "NVIDIA_H200X-1-18C,   VFIO_PCI, PCI_RESOURCE_NVIDIA_COM_NVIDIA_H200X-1-18C",
            "GH100_H200_SXM_141GB, VFIO_PCI, PCI_RESOURCE_NVIDIA_COM_GH100_H200_SXM_141GB",
            "2335,                 VFIO_PCI, PCI_RESOURCE_NVIDIA_COM_2335",
            "GRID_T4-1Q,           MEDIATED, MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q",
            "NVIDIA_A10-8Q,        MEDIATED, MDEV_PCI_RESOURCE_NVIDIA_COM_NVIDIA_A10-8Q",
            "nvidia-a10.8q,        MEDIATED, MDEV_PCI_RESOURCE_NVIDIA_COM_NVIDIA-A10_8Q",
    })
    void envVarFollowsKubeVirtsRule(String name, Attachment attachment, String expected) {
        ResourceName resource = new ResourceName(name);

        assertThat(resource.envVar(attachment)).isEqualTo(expected);
        assertThat(resource.envVar(attachment.envPrefix())).isEqualTo(expected);
    }

    @Test
    void envVarTakesAnyPrefixButNotAnEmptyOne() {
        ResourceName name = new ResourceName("GRID_T4-1Q");

        assertThat(name.envVar("CUSTOM")).isEqualTo("CUSTOM_NVIDIA_COM_GRID_T4-1Q");
        assertThatThrownBy(() -> name.envVar("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> name.envVar((String) null)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest(name = "{0} -> {1}, {2}")
    @CsvSource({
            "NVIDIA_L40S-1Q, nvidia.com/NVIDIA_L40S-1Q, kubevirt-NVIDIA_L40S-1Q.sock",
            "GRID_T4-1Q,     nvidia.com/GRID_T4-1Q,     kubevirt-GRID_T4-1Q.sock",
            "2335,           nvidia.com/2335,           kubevirt-2335.sock",
            "a.b,            nvidia.com/a.b,            kubevirt-a.b.sock",
    })
    void fullNameAndSocketFileName(String name, String fullName, String socket) {
        ResourceName resource = new ResourceName(name);

        assertThat(resource.fullName()).isEqualTo(fullName);
        assertThat(resource.toString()).isEqualTo(fullName);
        assertThat(resource.socketFileName()).isEqualTo(socket);
    }

    @ParameterizedTest(name = "socket for \"{0}\" stays in the plugin directory")
    @ValueSource(strings = {"../../etc/passwd", "/etc/shadow", "..", "a/../../b", "x\u0000/../y", "GRID T4-1Q",
            ".hidden", "a..\\..b", "\t..\t", "%2e%2e%2f"})
    void hostileNamesCannotEscapeThePluginDirectory(String raw) {
        Path dir = Path.of("/var/lib/kubelet/device-plugins");
        for (Optional<ResourceName> name : java.util.List.of(ResourceName.sanitize(raw),
                ResourceName.forMdevType(raw), ResourceName.forVgpuProfile(raw),
                ResourceName.forPciDeviceName(raw, "2335"))) {
            name.ifPresent(n -> {
                assertThat(n.name()).matches(VALID).doesNotContain("..");
                Path socket = dir.resolve(n.socketFileName()).normalize();
                assertThat(socket.getParent()).isEqualTo(dir);
                assertThat(n.envVar(Attachment.VFIO_PCI)).matches("[A-Z0-9_-]+");
            });
        }
    }

    @Test
    void namesOrderByTheirText() {
        assertThat(new ResourceName("A").compareTo(new ResourceName("B"))).isNegative();
        assertThat(new ResourceName("Z").compareTo(new ResourceName("a"))).isNegative();
        assertThat(new ResourceName("a1").compareTo(new ResourceName("a1"))).isZero();
    }
}
