package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * What the docs tell an operator about two behaviours of other systems that the code cannot change (issue 34, rows
 * 7 and 8): the kubelet fails a pod's whole prepare on the first claim with an error, and KubeVirt 1.9 finds no
 * device of a {@code firstAvailable} claim. The second is shown by {@code KubeVirtReadsWhatPrepareWroteTest}
 * ({@code aSubrequestIsAnsweredUnderItsBaseRequestButKubeVirtFindsNoRequestOfThatExactName}); this keeps the words that describe them true.
 */
class DraDocsTest {

    private static String read(String file) throws IOException {
        return Files.readString(Path.of("..", file)).replaceAll("\\s+", " ");
    }

    @Test
    void aPerClaimErrorIsDescribedAsFailingThePodsWholePrepare() throws IOException {
        String dra = read("docs/DRA.md");

        assertThat(dra).doesNotContain("makes it retry that claim only")
                .contains("fails the pod's whole prepare at the first claim with an error");
        assertThat(read("README.md")).doesNotContain("with the driver's reason; the kubelet retries it.")
                .contains("One such claim stops the whole pod");
    }

    @Test
    void firstAvailableIsNamedAsNotWorkingWithKubeVirt() throws IOException {
        assertThat(read("docs/DRA.md")).contains("`firstAvailable` does not work with KubeVirt v1.9.0");
        assertThat(read("README.md")).contains("`firstAvailable` (a list of alternatives) does not work with"
                + " KubeVirt 1.9");
    }
}
