package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The checkpoint keeps what a new instance needs, and anything it cannot parse counts as empty. */
class CheckpointTest {

    @TempDir
    Path tmp;

    static final PreparedClaim CLAIM = new PreparedClaim(new ClaimRef("vms", "vf", "u-1"),
            List.of(new PreparedDevice(List.of("gpu"), "node-a", "pci-0000-1b-00-4",
                    List.of("gpu.vgpu.dev/claim=u-1-pci-0000-1b-00-4", "gpu.vgpu.dev/metadata=u-1_gpu")),
                    new PreparedDevice(List.of("whole"), "node-a", "pci-0000-41-00-0",
                            List.of("gpu.vgpu.dev/claim=u-1-pci-0000-41-00-0"))),
            List.of(Path.of("/var/run/cdi/gpu.vgpu.dev-claim_u-1.json"), Path.of("/var/lib/kubelet/x")));

    @Test
    void whatIsSavedIsLoadedBackInOrder() throws IOException {
        PreparedClaim other = new PreparedClaim(new ClaimRef("a", "b", "u-0"), List.of(), List.of());
        Checkpoint.save(tmp.resolve("cp"), List.of(CLAIM, other));

        Map<String, PreparedClaim> loaded = Checkpoint.load(tmp.resolve("cp"), path -> true);

        assertThat(loaded.keySet()).containsExactly("u-1", "u-0");
        assertThat(loaded.get("u-1")).isEqualTo(CLAIM);
        assertThat(loaded.get("u-0")).isEqualTo(other);
    }

    @Test
    void noFileIsEmpty() {
        assertThat(Checkpoint.load(tmp.resolve("absent"), path -> true)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "vgpu-dra-checkpoint\t2\n", "vgpu-dra-checkpoint\t1\nclaim\tvms\tvf\n",
            "vgpu-dra-checkpoint\t1\nclaim\tvms\tvf\tu\n", "vgpu-dra-checkpoint\t1\ndevice\tp\td\tr\tc\nend\n",
            "vgpu-dra-checkpoint\t1\nclaim\tvms\tvf\tu\nend\nclaim\tvms\tvf\tu\nend\n",
            "vgpu-dra-checkpoint\t1\nclaim\tvms\tvf\tu\nwhat\nend\n"})
    void aFileItCannotParseIsEmpty(String content) throws IOException {
        Files.writeString(tmp.resolve("cp"), content);

        assertThat(Checkpoint.load(tmp.resolve("cp"), path -> true)).isEmpty();
    }

    @Test
    void aFieldWithATabIsRefusedRatherThanWrittenAmbiguously() {
        PreparedClaim bad = new PreparedClaim(new ClaimRef("vms", "v\tf", "u"), List.of(), List.of());

        assertThatThrownBy(() -> Checkpoint.save(tmp.resolve("cp"), List.of(bad))).isInstanceOf(IOException.class);
        assertThat(tmp.resolve("cp")).doesNotExist();
    }
}
