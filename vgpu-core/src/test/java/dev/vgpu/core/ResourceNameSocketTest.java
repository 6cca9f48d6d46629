package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Socket file names that fit in a unix socket path (docs/HOST-FACTS.md §2.4): the full name when it fits, else a
 * cut name with a hash of the full resource name. The kubelet's own directory, {@code /var/lib/kubelet/device-plugins},
 * takes 31 bytes and its separator one more, which leaves 75 of the 107 bytes for the file name.
 */
class ResourceNameSocketTest {

    /** What {@code /var/lib/kubelet/device-plugins/} leaves of 107 bytes. */
    private static final int KUBELET_DIR_BUDGET = 107 - "/var/lib/kubelet/device-plugins/".length();
    private static final String NAME_62 = "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-TWO_CHARS";
    private static final String NAME_63 = "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-THREE_CHRS";

    @Test
    void theKubeletDirectoryLeaves75Bytes() {
        assertThat("/var/lib/kubelet/device-plugins").hasSize(31);
        assertThat(KUBELET_DIR_BUDGET).isEqualTo(75);
        assertThat(NAME_62).hasSize(62);
        assertThat(NAME_63).hasSize(63);
    }

    @ParameterizedTest(name = "{0} in {1} bytes")
    @CsvSource({
            "NVIDIA_L40S-1Q,                                                75",
            "GRID_T4-1Q,                                                    24",
            "2335,                                                          18",
            // 61 characters: kubevirt-<61>.sock is exactly 75 bytes
            "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-ONE_CHRS, 75",
    })
    void aNameThatFitsIsUnchanged(String name, int budget) {
        ResourceName resource = new ResourceName(name);

        assertThat(resource.socketFileName(budget)).contains("kubevirt-" + name + ".sock");
        assertThat(resource.socketFileName(budget)).contains(resource.socketFileName());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {NAME_62, NAME_63})
    void aLongNameInTheKubeletDirectoryIsCutAndHashed(String name) {
        ResourceName resource = new ResourceName(name);

        String file = resource.socketFileName(KUBELET_DIR_BUDGET).orElseThrow();

        assertThat(file).isEqualTo("kubevirt-" + name.substring(0, 52) + "-" + hash8("nvidia.com/" + name) + ".sock");
        assertThat(("/var/lib/kubelet/device-plugins/" + file).getBytes(StandardCharsets.UTF_8)).hasSize(107);
    }

    @Test
    void theHashIsTheStartOfTheSha256OfTheFullResourceName() {
        assertThat(new ResourceName(NAME_62).socketFileName(KUBELET_DIR_BUDGET))
                .contains("kubevirt-NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-a64c4e76.sock");
    }

    @Test
    void twoLongNamesWithOneBeginningGetTwoFiles() {
        String prefix = "NVIDIA_H200X-1-18C_A_SHARED_BEGINNING_OF_FIFTY_CHAR";
        assertThat(prefix).hasSize(51);
        ResourceName first = new ResourceName(prefix.substring(0, 50) + "_AND_THEN_ONE");
        ResourceName second = new ResourceName(prefix.substring(0, 50) + "_AND_THEN_TWO");

        String a = first.socketFileName(KUBELET_DIR_BUDGET).orElseThrow();
        String b = second.socketFileName(KUBELET_DIR_BUDGET).orElseThrow();

        assertThat(first.socketFileName()).hasSizeGreaterThan(KUBELET_DIR_BUDGET);
        assertThat(a).isNotEqualTo(b);
        assertThat(a.substring(0, a.length() - 14)).isEqualTo(b.substring(0, b.length() - 14));
    }

    @Test
    void theNameIsTheSameEveryTime() {
        String once = new ResourceName(NAME_63).socketFileName(KUBELET_DIR_BUDGET).orElseThrow();

        for (int i = 0; i < 3; i++) {
            assertThat(new ResourceName(NAME_63).socketFileName(KUBELET_DIR_BUDGET)).contains(once);
        }
    }

    @ParameterizedTest(name = "a cut ending in \"{0}\" loses it")
    @ValueSource(strings = {"_", "-", ".", "_-", "-_."})
    void aCutNeverEndsInPunctuation(String punctuation) {
        // The cut keeps 52 characters in 75 bytes; put the punctuation right before that point.
        String head = "A".repeat(52 - punctuation.length());
        ResourceName resource = new ResourceName(head + punctuation + "TAIL_CUT_OF");

        String file = resource.socketFileName(KUBELET_DIR_BUDGET).orElseThrow();

        assertThat(file).isEqualTo("kubevirt-" + head + "-" + hash8(resource.fullName()) + ".sock");
    }

    @Test
    void everyBudgetGetsTheLongestNameThatFitsAndNothingBelow22Bytes() {
        ResourceName resource = new ResourceName("A".repeat(63));
        String hash = hash8(resource.fullName());

        IntStream.rangeClosed(-1, 90).forEach(budget -> {
            Optional<String> file = resource.socketFileName(budget);
            if (budget < 22) {
                assertThat(file).as("budget %d", budget).isEmpty();
            } else if (budget < 24) {
                assertThat(file).as("budget %d", budget).contains("kubevirt-" + hash + ".sock");
            } else if (budget < 77) {
                assertThat(file).as("budget %d", budget)
                        .contains("kubevirt-" + "A".repeat(budget - 23) + "-" + hash + ".sock");
            } else {
                assertThat(file).as("budget %d", budget).contains(resource.socketFileName());
            }
        });
        assertThat(("kubevirt-" + hash + ".sock")).hasSize(ResourceName.SHORTEST_SOCKET_FILE_NAME_BYTES);
    }

    @Test
    void aShortCutLosesItsPunctuationToo() {
        ResourceName resource = new ResourceName("A-" + "B".repeat(40));

        // 25 bytes leave two characters for the cut: "A-" loses its "-", so "A" stays.
        assertThat(resource.socketFileName(25)).contains("kubevirt-A-" + hash8(resource.fullName()) + ".sock");
        assertThat(resource.socketFileName(24)).contains("kubevirt-A-" + hash8(resource.fullName()) + ".sock");
        assertThat(new ResourceName("A.B" + "C".repeat(40)).socketFileName(24))
                .contains("kubevirt-A-" + hash8("nvidia.com/A.B" + "C".repeat(40)) + ".sock");
    }

    private static String hash8(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8))).substring(0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
