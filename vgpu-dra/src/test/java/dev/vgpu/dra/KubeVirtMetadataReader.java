package dev.vgpu.dra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A port of the rules by which KubeVirt v1.9.0's virt-launcher finds a DRA device in the KEP-5304 metadata mounted
 * into its container (docs/DRA.md §5), to read what Prepare wrote as KubeVirt would. Anything KubeVirt rejects
 * throws {@link Rejected}.
 *
 * <p>Public, in vgpu-dra's test jar, for the daemon's end-to-end test ({@code DraEndToEndIT}).
 */
public final class KubeVirtMetadataReader {

    static final String V1ALPHA1 = "metadata.resource.k8s.io/v1alpha1";

    private static final ObjectMapper JSON = new ObjectMapper();

    private KubeVirtMetadataReader() {
    }

    /**
     * One entry of a VMI's {@code spec.resourceClaims}: a name and exactly one of a claim name or a template name.
     */
    public record VmiClaim(String name, Optional<String> resourceClaimName, Optional<String> templateName) {
        public static VmiClaim named(String name, String resourceClaimName) {
            return new VmiClaim(name, Optional.of(resourceClaimName), Optional.empty());
        }

        public static VmiClaim fromTemplate(String name, String templateName) {
            return new VmiClaim(name, Optional.empty(), Optional.of(templateName));
        }
    }

    /** What the launcher builds its {@code <hostdev>} from. */
    public sealed interface Found permits Pci, Mdev {
    }

    /** {@code <hostdev type=pci managed=no>} with this address. */
    public record Pci(String busId) implements Found {
    }

    /** {@code <hostdev type=mdev model=vfio-pci>} with this UUID. */
    public record Mdev(String uuid) implements Found {
    }

    /** What KubeVirt would fail the VMI with. */
    public static final class Rejected extends Exception {
        Rejected(String message) {
            super(message);
        }
    }

    /**
     * Finds the device of a VMI's {@code gpus[]} or {@code hostDevices[]} entry {@code {claimName, requestName}}.
     *
     * @param containerRoot where the container's file system is, so that container paths resolve under it
     */
    public static Found read(Path containerRoot, List<VmiClaim> vmiClaims, String claimName, String requestName)
            throws Rejected {
        VmiClaim entry = vmiClaims.stream().filter(c -> c.name().equals(claimName)).findFirst()
                .orElseThrow(() -> new Rejected("no resourceClaims entry named " + claimName));
        String owner = entry.resourceClaimName().map(n -> "resourceclaims/" + n)
                .orElseGet(() -> "resourceclaimtemplates/" + entry.name());
        Path dir = containerRoot.resolve(DeviceMetadata.CONTAINER_ROOT.substring(1)).resolve(owner)
                .resolve(requestName);
        List<Path> matches = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*-metadata.json")) {
                files.forEach(matches::add);
            } catch (IOException e) {
                throw new Rejected("cannot list " + dir + ": " + e);
            }
        }
        if (matches.size() != 1) {
            throw new Rejected("expected exactly one metadata file in " + dir + ", found " + matches.size());
        }
        JsonNode metadata = firstV1alpha1(matches.get(0));
        JsonNode request = null;
        for (JsonNode r : metadata.path("requests")) {
            if (r.path("name").asText("").equals(requestName)) {
                request = r;
                break;
            }
        }
        if (request == null) {
            throw new Rejected("no request named " + requestName + " in " + matches.get(0));
        }
        JsonNode devices = request.path("devices");
        if (!devices.isArray() || devices.size() != 1) {
            throw new Rejected("request " + requestName + " must hold exactly one device, has "
                    + (devices.isArray() ? devices.size() : 0));
        }
        JsonNode attributes = devices.get(0).path("attributes");
        Optional<String> mdev = string(attributes, "mdevUUID");
        if (mdev.isPresent()) {
            return new Mdev(mdev.get());
        }
        Optional<String> pci = string(attributes, "resource.kubernetes.io/pciBusID");
        if (pci.isPresent()) {
            return new Pci(pci.get());
        }
        throw new Rejected("the device of request " + requestName + " has neither mdevUUID nor pciBusID");
    }

    private static JsonNode firstV1alpha1(Path file) throws Rejected {
        int objects = 0;
        try (MappingIterator<JsonNode> stream = JSON.readerFor(JsonNode.class).readValues(file.toFile())) {
            while (stream.hasNextValue()) {
                JsonNode object = stream.nextValue();
                objects++;
                if (!object.hasNonNull("apiVersion") || !object.get("apiVersion").isTextual()) {
                    throw new Rejected("a metadata object in " + file + " has no apiVersion");
                }
                if (object.get("apiVersion").asText().equals(V1ALPHA1)) {
                    return object;
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new Rejected("cannot decode " + file + ": " + e.getMessage());
        }
        throw new Rejected(objects == 0 ? "the metadata stream " + file + " is empty"
                : "no " + V1ALPHA1 + " object in " + file);
    }

    /** The attribute's non-empty {@code string} value. */
    private static Optional<String> string(JsonNode attributes, String name) {
        JsonNode value = attributes.path(name).path("string");
        return value.isTextual() && !value.asText().isEmpty() ? Optional.of(value.asText()) : Optional.empty();
    }
}
