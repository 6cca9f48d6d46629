package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.GPU;
import static dev.vgpu.dra.DraHarness.MDEV;
import static dev.vgpu.dra.DraHarness.VF;
import static dev.vgpu.dra.DraHarness.VF2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.dra.grpc.v1.Claim;
import dev.vgpu.dra.grpc.v1.NodePrepareResourceResponse;
import dev.vgpu.dra.grpc.v1.NodePrepareResourcesResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prepare and Unprepare as the kubelet drives them (docs/DRA.md §2), over real unix sockets and real files: every
 * claim answered, replays, a restart between Prepare and Unprepare, per-claim errors that leave nothing behind,
 * double use, and a lost or corrupt checkpoint.
 */
class PrepareUnprepareTest {

    static final String A = "aaaaaaaa-0000-4000-8000-00000000000a";
    static final String B = "bbbbbbbb-0000-4000-8000-00000000000b";

    @TempDir
    Path tmp;
    DraHarness h;

    @BeforeEach
    void start() {
        h = new DraHarness(tmp);
    }

    @AfterEach
    void stop() {
        h.close();
    }

    /** Every file under the CDI directory and the plugin's metadata directory, relative to the test directory. */
    private List<String> written() throws IOException {
        List<String> out = new java.util.ArrayList<>();
        for (Path root : List.of(h.cdiDir(), tmp.resolve("kubelet/plugins/gpu.vgpu.dev/dra-device-metadata"))) {
            if (Files.exists(root)) {
                try (Stream<Path> files = Files.walk(root)) {
                    files.filter(Files::isRegularFile).map(p -> tmp.relativize(p).toString()).sorted()
                            .forEach(out::add);
                }
            }
        }
        return out;
    }

    @Test
    void aPreparedClaimHasOneSpecAndOneMetadataFileWithItsMountAndTheClaimSpecIsExactlyThis() throws IOException {
        Claim claim = h.allocate("vf", A, "gpu", VF);

        assertThat(h.prepare(claim).getError()).isEmpty();

        assertThat(written()).containsExactly("cdi/gpu.vgpu.dev-claim_" + A + ".json",
                "cdi/gpu.vgpu.dev_metadata_" + A + "_gpu.json",
                "kubelet/plugins/gpu.vgpu.dev/dra-device-metadata/vms_" + A + "/gpu/metadata.json");
        assertThat(Files.readString(h.cdiDir().resolve("gpu.vgpu.dev-claim_" + A + ".json"))).isEqualTo(
                "{\"cdiVersion\":\"0.5.0\",\"kind\":\"gpu.vgpu.dev/claim\",\"devices\":[{\"name\":\"" + A + "-" + VF
                        + "\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/vfio/vfio\",\"hostPath\":"
                        + "\"/dev/vfio/vfio\",\"permissions\":\"mrw\"},{\"path\":\"/dev/vfio/100\",\"hostPath\":"
                        + "\"/dev/vfio/100\",\"permissions\":\"mrw\"}]}}]}\n");
        assertThat(Files.readString(tmp.resolve("kubelet/plugins/gpu.vgpu.dev/dra-device-metadata/vms_" + A + "/gpu/"
                + "metadata.json"))).isEqualTo("{\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\",\"kind\":"
                + "\"DeviceMetadata\",\"metadata\":{\"name\":\"vf\",\"namespace\":\"vms\",\"uid\":\"" + A + "\","
                + "\"generation\":1},\"requests\":[{\"name\":\"gpu\",\"devices\":[{\"driver\":\"gpu.vgpu.dev\","
                + "\"pool\":\"node-a\",\"name\":\"" + VF + "\",\"attributes\":{\"type\":{\"string\":\"vgpu\"},"
                + "\"resource.kubernetes.io/pciBusID\":{\"string\":\"0000:1b:00.4\"}}}]}]}\n");
        assertThat(Files.getPosixFilePermissions(tmp.resolve("kubelet/plugins/gpu.vgpu.dev/dra-device-metadata/"
                + "vms_" + A + "/gpu/metadata.json"))).isEqualTo(AtomicFiles.READABLE);
        try (Stream<Path> left = Files.list(h.cdiDir())) {
            assertThat(left).noneMatch(p -> p.getFileName().toString().endsWith(".tmp"));
        }
    }

    @Test
    void aRepeatedPrepareAnswersTheSameWithoutReadingTheClaimAgain() throws IOException {
        Claim claim = h.allocate("vf", A, "gpu", VF);
        NodePrepareResourceResponse first = h.prepare(claim);
        List<String> files = written();

        NodePrepareResourceResponse again = h.prepare(claim);

        assertThat(again).isEqualTo(first);
        assertThat(written()).isEqualTo(files);
        assertThat(h.reads).hasValue(1);
    }

    @Test
    void afterARestartAPrepareIsAnsweredFromTheCheckpointAndUnprepareRemovesEverything() throws IOException {
        Claim claim = h.allocate("mdev", A, Optional.of("vgpu"), "t4", MDEV);
        NodePrepareResourceResponse before = h.prepare(claim);
        h.stop();
        h.apiServer.clear();
        h.start();

        assertThat(h.prepare(claim)).isEqualTo(before);
        assertThat(h.unprepare(claim)).isEmpty();

        assertThat(written()).isEmpty();
        assertThat(tmp.resolve("kubelet/plugins/gpu.vgpu.dev/dra-device-metadata/vms_" + A)).doesNotExist();
        assertThat(Files.readString(h.checkpoint())).doesNotContain(A);
        assertThat(h.unprepare(claim)).as("a second unprepare").isEmpty();
    }

    @Test
    void emptyRequestsAreAnsweredEmpty() {
        assertThat(h.kubelet.prepare(h.plugin.draSocket()).getClaimsMap()).isEmpty();
        assertThat(h.kubelet.unprepare(h.plugin.draSocket()).getClaimsMap()).isEmpty();
    }

    @Test
    void anUnknownDeviceFailsItsClaimAloneAndLeavesNothingBehind() throws IOException {
        Claim unknown = h.allocate("gone", A, "gpu", "pci-0000-99-00-0");
        Claim fine = h.allocate("fine", B, "gpu", GPU);

        NodePrepareResourcesResponse answer = h.kubelet.prepare(h.plugin.draSocket(), unknown, fine);

        assertThat(answer.getClaimsMap()).containsOnlyKeys(A, B);
        assertThat(answer.getClaimsOrThrow(A).getError())
                .isEqualTo("unknown device pci-0000-99-00-0: not advertised on this node");
        assertThat(answer.getClaimsOrThrow(A).getDevicesList()).isEmpty();
        assertThat(answer.getClaimsOrThrow(B).getError()).isEmpty();
        assertThat(written()).noneMatch(f -> f.contains(A) || f.contains("vms_gone"));
    }

    @Test
    void aDevicePreparedForOneClaimIsAnErrorForAnotherUntilTheFirstIsUnprepared() throws IOException {
        Claim first = h.allocate("first", A, "gpu", VF);
        Claim second = h.allocate("second", B, "gpu", VF2, VF);
        assertThat(h.prepare(first).getError()).isEmpty();

        assertThat(h.prepare(second).getError()).isEqualTo("device " + VF + " is already prepared for claim vms/first"
                + " (" + A + ")");
        assertThat(written()).noneMatch(f -> f.contains(B) || f.contains("vms_second"));

        assertThat(h.unprepare(first)).isEmpty();
        assertThat(h.prepare(second).getError()).isEmpty();
    }

    @Test
    void unprepareOfAClaimNeverPreparedSucceeds() {
        assertThat(h.unprepare(TestKubelet.claim("vms", "never", A))).isEmpty();
    }

    @Test
    void aDeviceNoLongerWhatWasAdvertisedIsRefusedWithHandoversReason() throws IOException {
        h.host.configureVf("0000:1b:00.4", 1155);

        NodePrepareResourceResponse answer = h.prepare(h.allocate("vf", A, "gpu", VF));

        assertThat(answer.getError()).isEqualTo("device 0000:1b:00.4 was vGPU type 1152 when advertised and is now"
                + " vGPU type 1155");
        assertThat(written()).isEmpty();
    }

    @Test
    void otherDriversResultsAreNotOursAndAClaimWithOnlyThoseHasNoDevices() {
        h.apiServer.put(A, new AllocatedClaim(new ClaimRef("vms", "nic", A), Optional.empty(),
                List.of(new AllocatedDevice("nic", "sriov.example.com", "node-a", VF))));

        NodePrepareResourceResponse answer = h.prepare(TestKubelet.claim("vms", "nic", A));

        assertThat(answer.getError()).isEmpty();
        assertThat(answer.getDevicesList()).isEmpty();
    }

    @Test
    void claimsTheApiServerDoesNotHaveOrHasUnderAnotherUidOrPoolAreErrors() {
        assertThat(h.prepare(TestKubelet.claim("vms", "missing", A)).getError())
                .isEqualTo("claim vms/missing (" + A + ") not found");

        h.apiServer.put(B, new AllocatedClaim(new ClaimRef("vms", "vf", "cccccccc-0000-4000-8000-00000000000c"),
                Optional.empty(), List.of(new AllocatedDevice("gpu", "gpu.vgpu.dev", "node-a", VF))));
        assertThat(h.prepare(TestKubelet.claim("vms", "vf", B)).getError()).contains("not the claim the kubelet");

        h.apiServer.put(A, new AllocatedClaim(new ClaimRef("vms", "other", A), Optional.empty(),
                List.of(new AllocatedDevice("gpu", "gpu.vgpu.dev", "node-b", VF))));
        assertThat(h.prepare(TestKubelet.claim("vms", "other", A)).getError())
                .isEqualTo("device " + VF + " is in pool node-b, not this node's pool node-a");
    }

    @Test
    void claimReferencesThatCannotNameAFileAreErrorsForThatClaim() throws IOException {
        h.allocate("../../etc", A, "gpu", VF);

        assertThat(h.prepare(TestKubelet.claim("vms", "../../etc", A)).getError()).contains("not a DNS subdomain");
        assertThat(h.prepare(TestKubelet.claim("vms", "vf", "../x")).getError()).contains("is not a UID");
        assertThat(written()).isEmpty();
    }

    @Test
    void aCorruptCheckpointIsTreatedAsEmptyAndUnprepareStillRemovesTheClaimsFilesByName() throws IOException {
        Claim claim = h.allocate("vf", A, "gpu", VF);
        assertThat(h.prepare(claim).getError()).isEmpty();
        h.stop();
        Files.writeString(h.checkpoint(), "not a checkpoint\n");
        h.start();

        assertThat(h.unprepare(claim)).isEmpty();

        assertThat(written()).isEmpty();
        assertThat(h.prepare(h.allocate("again", B, "gpu", VF)).getError()).isEmpty();
    }
}
