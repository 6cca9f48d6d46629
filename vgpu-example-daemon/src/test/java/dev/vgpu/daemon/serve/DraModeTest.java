package dev.vgpu.daemon.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What DRA mode reads of its environment that the CLI tests (DraCliTest) cannot show whole. */
class DraModeTest {

    @TempDir
    Path tmp;

    @Test
    void emptyEntriesOfAKubeconfigListAreDroppedAsKubectlDropsThem() throws Exception {
        Path one = Files.writeString(tmp.resolve("one"), "apiVersion: v1\nkind: Config\n");

        // One file with a separator around it is that file.
        assertThat(DraMode.oneFile(one + ":")).isEqualTo(one.toString());
        assertThat(DraMode.oneFile(":" + one)).isEqualTo(one.toString());
        assertThat(DraMode.oneFile(one.toString())).isEqualTo(one.toString());
    }
}
