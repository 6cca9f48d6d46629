package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.dra.KubeVirtMetadataReader.VmiClaim;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader fixture refuses what KubeVirt v1.9.0 refuses (docs/DRA.md §5), so that a test reading Prepare's
 * output through it can fail: streams and layouts written by hand.
 */
class KubeVirtMetadataReaderTest {

    static final String V1 = "metadata.resource.k8s.io/v1alpha1";
    static final String PCI = "{\"resource.kubernetes.io/pciBusID\":{\"string\":\"0000:1b:00.4\"}}";

    @TempDir
    Path root;

    private Path write(String file, String content) throws IOException {
        Path path = root.resolve("var/run/kubernetes.io/dra-device-attributes/resourceclaims/c/gpu").resolve(file);
        Files.createDirectories(path.getParent());
        return Files.writeString(path, content);
    }

    private static String object(String apiVersion, String request, String... attributes) {
        StringBuilder devices = new StringBuilder();
        for (String a : attributes) {
            devices.append(devices.length() == 0 ? "" : ",").append("{\"driver\":\"d\",\"pool\":\"p\",\"name\":\"n\","
                    + "\"attributes\":").append(a).append('}');
        }
        return "{" + (apiVersion == null ? "" : "\"apiVersion\":\"" + apiVersion + "\",") + "\"kind\":\"DeviceMetadata\","
                + "\"requests\":[{\"name\":\"" + request + "\",\"devices\":[" + devices + "]}]}\n";
    }

    private KubeVirtMetadataReader.Found read() throws KubeVirtMetadataReader.Rejected {
        return KubeVirtMetadataReader.read(root, List.of(VmiClaim.named("vm-claim", "c")), "vm-claim", "gpu");
    }

    @Test
    void theFirstV1alpha1ObjectIsReadAndOtherVersionsBeforeItAreSkipped() throws Exception {
        write("d-metadata.json", object("metadata.resource.k8s.io/v1alpha2", "gpu", "{}") + object(V1, "gpu", PCI)
                + object(V1, "gpu", "{\"mdevUUID\":{\"string\":\"u\"}}"));

        assertThat(read()).isEqualTo(new KubeVirtMetadataReader.Pci("0000:1b:00.4"));
    }

    @Test
    void mdevUuidWinsOverPciBusId() throws Exception {
        write("d-metadata.json", object(V1, "gpu", "{\"resource.kubernetes.io/pciBusID\":{\"string\":\"0000:06:00.0\"},"
                + "\"mdevUUID\":{\"string\":\"aa618089-8b16-4d01-a136-25a0f3c73123\"}}"));

        assertThat(read()).isEqualTo(new KubeVirtMetadataReader.Mdev("aa618089-8b16-4d01-a136-25a0f3c73123"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "no file|",
            "an empty stream|empty",
            "bad JSON|{\"apiVersion\":",
            "no apiVersion|missing",
            "only other versions|other",
            "no request of that name|wrong-request",
            "two devices in the request|two",
            "an empty pciBusID|empty-value",
            "a differently cased mdevUUID|mDevUUID"})
    void whatKubeVirtRefusesIsRefused(String what, String kind) throws Exception {
        if (kind != null) {
            write("d-metadata.json", switch (kind) {
                case "empty" -> "";
                case "missing" -> object(null, "gpu", PCI);
                case "other" -> object("metadata.resource.k8s.io/v1", "gpu", PCI);
                case "wrong-request" -> object(V1, "gpu/sub", PCI);
                case "two" -> object(V1, "gpu", PCI, PCI);
                case "empty-value" -> object(V1, "gpu", "{\"resource.kubernetes.io/pciBusID\":{\"string\":\"\"}}");
                case "mDevUUID" -> object(V1, "gpu", "{\"mDevUUID\":{\"string\":\"u\"}}");
                default -> kind;
            });
        }

        assertThatThrownBy(this::read).as(what).isInstanceOf(KubeVirtMetadataReader.Rejected.class);
    }

    @Test
    void twoMetadataFilesForOneRequestAreRefused() throws Exception {
        write("a-metadata.json", object(V1, "gpu", PCI));
        write("b-metadata.json", object(V1, "gpu", PCI));

        assertThatThrownBy(this::read).hasMessageContaining("exactly one metadata file");
    }

    @Test
    void aVmiWithoutTheClaimEntryIsRefused() throws Exception {
        write("d-metadata.json", object(V1, "gpu", PCI));

        assertThatThrownBy(() -> KubeVirtMetadataReader.read(root, List.of(VmiClaim.named("x", "c")), "vm-claim",
                "gpu")).hasMessageContaining("no resourceClaims entry");
    }
}
