package dev.vgpu.configurator.inuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.configurator.InUse;
import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The kubelet's device checkpoint: what counts as allocated, and what makes the file unusable. */
class KubeletCheckpointTest {

    /** As a kubelet of 1.20 or later writes it: compact JSON, ids per NUMA node, the response as base64. */
    static final String CURRENT = "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"6f1c\",\"ContainerName\":"
            + "\"compute\",\"ResourceName\":\"nvidia.com/NVIDIA_L40S-12Q\",\"DeviceIDs\":{\"0\":[\"0000:41:00.4\"],"
            + "\"1\":[\"0000:c1:00.5\"]},\"AllocResp\":\"CiEKHVBDSV9SRVNPVVJDRV9OVklESUFfQ09NXzxcdTAwM2U=\"},"
            + "{\"PodUID\":\"77aa\",\"ContainerName\":\"c\",\"ResourceName\":\"nvidia.com/GRID_T4-1Q\",\"DeviceIDs\":"
            + "{\"-1\":[\"7f0e7a5e-5c1a-4a8e-9a55-0f2f2c4f9d11\"]},\"AllocResp\":null},"
            + "{\"PodUID\":\"88bb\",\"ContainerName\":\"c\",\"ResourceName\":\"example.com/nic\",\"DeviceIDs\":"
            + "{\"0\":[\"0000:03:00.1\"]},\"AllocResp\":\"\"}],"
            + "\"RegisteredDevices\":{\"nvidia.com/NVIDIA_L40S-12Q\":[\"0000:41:00.4\",\"0000:41:00.6\"]}},"
            + "\"Checksum\":3854731932,\"BootID\":\"b7\"}";

    @TempDir
    Path dir;

    @Test
    void everyAllocatedPciAddressOfEveryResourceIsInUse() throws IOException {
        Files.writeString(dir.resolve(KubeletCheckpoint.FILE), CURRENT);

        assertThat(KubeletCheckpoint.in(dir).vfs()).containsExactlyInAnyOrder(PciAddress.parse("0000:41:00.4"),
                PciAddress.parse("0000:c1:00.5"), PciAddress.parse("0000:03:00.1"));
    }

    @Test
    void theListFormOfOlderKubeletsIsReadToo() throws IOException {
        Path file = Files.writeString(dir.resolve(KubeletCheckpoint.FILE), "{\"Data\":{\"PodDeviceEntries\":[{"
                + "\"PodUID\":\"1\",\"ContainerName\":\"c\",\"ResourceName\":\"r\",\"DeviceIDs\":[\"0000:41:00.5\"],"
                + "\"AllocResp\":\"\"}],\"RegisteredDevices\":{}},\"Checksum\":1}");

        assertThat(KubeletCheckpoint.read(file)).containsExactly(PciAddress.parse("0000:41:00.5"));
    }

    @Test
    void noFileOrNoEntriesIsNothingInUse() throws IOException {
        assertThat(KubeletCheckpoint.in(dir).vfs()).isEmpty();
        Path file = Files.writeString(dir.resolve(KubeletCheckpoint.FILE),
                "{\"Data\":{\"PodDeviceEntries\":null,\"RegisteredDevices\":null},\"Checksum\":0}");
        assertThat(KubeletCheckpoint.read(file)).isEmpty();
        Files.writeString(file, "{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":null}]},\"Checksum\":0}");
        assertThat(KubeletCheckpoint.read(file)).isEmpty();
    }

    @Test
    void theFileIsReadAgainAtEveryAsk() throws IOException {
        InUse inUse = KubeletCheckpoint.in(dir);
        assertThat(inUse.vfs()).isEmpty();

        Files.writeString(dir.resolve(KubeletCheckpoint.FILE), CURRENT);

        assertThat(inUse.vfs()).contains(PciAddress.parse("0000:41:00.4"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            truncated          | {"Data":{"PodDeviceEntries":[{"DeviceIDs":{"0":["0000:41:00.4"]       | it is not JSON
            empty              | ''                                                                     | it has no "Data" object
            no Data            | {"Checksum":1}                                                         | it has no "Data" object
            entries not a list | {"Data":{"PodDeviceEntries":{}}}                                       | "Data.PodDeviceEntries" is not a list
            entry not object   | {"Data":{"PodDeviceEntries":[3]}}                                      | "Data.PodDeviceEntries[0]" is not an object
            ids not a list     | {"Data":{"PodDeviceEntries":[{"DeviceIDs":{"0":"0000:41:00.4"}}]}}     | "Data.PodDeviceEntries[0].DeviceIDs.0" is not a list of device ids
            id not text        | {"Data":{"PodDeviceEntries":[{"DeviceIDs":[7]}]}}                      | "Data.PodDeviceEntries[0].DeviceIDs" holds a device id that is not text
            """)
    void aFileThatIsNoCheckpointIsAnErrorNamingIt(String what, String text, String problem) throws IOException {
        Path file = Files.writeString(dir.resolve(KubeletCheckpoint.FILE), text);

        assertThatThrownBy(() -> KubeletCheckpoint.read(file)).isInstanceOf(IOException.class)
                .hasMessageStartingWith("the kubelet's device checkpoint " + file + " cannot be used: " + problem)
                .hasMessageEndingWith("which VFs are in use cannot be told from it");
    }

    @Test
    void whatIsNoRegularFileIsNeverRead() throws IOException {
        Path real = Files.writeString(dir.resolve("elsewhere"), CURRENT);
        Path link = Files.createSymbolicLink(dir.resolve(KubeletCheckpoint.FILE), real);
        assertThatThrownBy(() -> KubeletCheckpoint.read(link)).hasMessageContaining("it is a symbolic link");

        Path directory = Files.createDirectory(dir.resolve("d"));
        assertThatThrownBy(() -> KubeletCheckpoint.read(directory)).hasMessageContaining("not a regular file");

        Path large = Files.write(dir.resolve("large"), new byte[KubeletCheckpoint.MAX_BYTES + 1]);
        assertThatThrownBy(() -> KubeletCheckpoint.read(large)).hasMessageContaining("it has 16777217 bytes");

        Path latin1 = Files.write(dir.resolve("latin1"), "{\"Data\":{\"x\":\"caf\u00e9\"}}".getBytes(
                StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> KubeletCheckpoint.read(latin1)).hasMessageContaining("it is not UTF-8 text");
    }

    @Test
    void aUnionAsksEverySourceAndFailsWhenOneCannotTell() throws IOException {
        PciAddress a = PciAddress.parse("0000:41:00.4");
        PciAddress b = PciAddress.parse("0000:41:00.5");
        assertThat(InUse.allOf(InUse.of(Set.of(a)), InUse.of(Set.of(b)), InUse.none()).vfs())
                .containsExactlyInAnyOrder(a, b);

        InUse blind = InUse.allOf(InUse.of(Set.of(a)), () -> {
            throw new IOException("cannot tell");
        });
        assertThatThrownBy(blind::vfs).hasMessage("cannot tell");
    }
}
