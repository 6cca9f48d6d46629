package dev.vgpu.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ResourceName;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The socket path of a resource in a device-plugin directory fits in 107 bytes (docs/HOST-FACTS.md §2.4). */
class PluginSocketsTest {

    private static final ResourceName LONG = new ResourceName(
            "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-THREE_CHRS");

    @ParameterizedTest(name = "{0} leaves {1} bytes")
    @CsvSource({
            "/var/lib/kubelet/device-plugins,  75",
            "/var/lib/kubelet/device-plugins/, 75",
            "/,                                106",
            "dp,                               104",
            "/tmp/é,                           99",
    })
    void theBudgetIsWhatTheDirectoryAndItsSeparatorLeave(String dir, int budget) {
        assertThat(PluginSockets.budget(Path.of(dir))).isEqualTo(budget);
    }

    @Test
    void aShortNameKeepsItsFullSocketName() {
        ResourceName name = new ResourceName("NVIDIA_L40S-1Q");

        assertThat(PluginSockets.path(Path.of("/var/lib/kubelet/device-plugins"), name))
                .contains(Path.of("/var/lib/kubelet/device-plugins/kubevirt-NVIDIA_L40S-1Q.sock"));
    }

    @Test
    void aLongNameInTheKubeletDirectoryGetsAPathOfExactly107Bytes() {
        Path socket = PluginSockets.path(Path.of("/var/lib/kubelet/device-plugins"), LONG).orElseThrow();

        assertThat(socket.toString().getBytes(StandardCharsets.UTF_8)).hasSize(107);
        assertThat(socket.getParent()).isEqualTo(Path.of("/var/lib/kubelet/device-plugins"));
        assertThat(socket.getFileName().toString()).startsWith("kubevirt-NVIDIA_H200X-1-18C_").endsWith(".sock")
                .isNotEqualTo(LONG.socketFileName());
    }

    @Test
    void aDirectoryWithMultiByteCharactersCountsBytesNotCharacters() {
        // 31 characters but 61 bytes: each "é" is two bytes in UTF-8.
        Path dir = Path.of("/" + "é".repeat(30));

        Path socket = PluginSockets.path(dir, LONG).orElseThrow();

        assertThat(socket.toString().getBytes(StandardCharsets.UTF_8)).hasSizeLessThanOrEqualTo(107);
        assertThat(PluginSockets.budget(dir)).isEqualTo(107 - 62);
    }

    @Test
    void aDirectoryThatLeavesLessThan22BytesHasNoSocketForALongName() {
        Path fits = Path.of("/" + "d".repeat(83));     // 84 bytes, 22 left
        Path tooLong = Path.of("/" + "d".repeat(84));  // 85 bytes, 21 left

        assertThat(PluginSockets.path(fits, LONG).orElseThrow().toString()).hasSize(107);
        assertThat(PluginSockets.path(tooLong, LONG)).isEmpty();
        // A name whose full socket name is shorter than the shortest cut one still fits.
        assertThat(PluginSockets.path(tooLong, new ResourceName("A"))).contains(tooLong.resolve("kubevirt-A.sock"));
    }
}
