package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.VF;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.dra.grpc.v1.Claim;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A result with {@code adminAccess: true} (docs/DRA.md §3: a monitoring pod reaching a device a VM holds) is
 * prepared beside the device's owner: it neither takes the device from the owner's claim nor blocks it, whichever
 * comes first, and its Unprepare, a restart and the checkpoint keep the owner's hold as it was. Before: whichever
 * of the two came second failed Prepare forever.
 */
class AdminAccessTest {

    static final String OWNER = "a0000000-aaaa-4bbb-8ccc-000000000001";
    static final String ADMIN = "a0000000-aaaa-4bbb-8ccc-000000000002";
    static final String OTHER = "a0000000-aaaa-4bbb-8ccc-000000000003";

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

    private Claim admin(String uid) {
        h.apiServer.put(uid, new AllocatedClaim(new ClaimRef("monitoring", "dcgm", uid), Optional.empty(),
                List.of(new AllocatedDevice("gpu", DraHarness.DRIVER, DraHarness.POOL, VF, true))));
        return TestKubelet.claim("monitoring", "dcgm", uid);
    }

    @Test
    void anAdminClaimAfterTheOwnerIsPreparedAndTheOwnerKeepsTheDevice() {
        Claim owner = h.allocate("vm", OWNER, "gpu", VF);
        assertThat(h.prepare(owner).getError()).isEmpty();

        assertThat(h.prepare(admin(ADMIN)).getError()).isEmpty();

        assertThat(h.prepare(h.allocate("thief", OTHER, "gpu", VF)).getError())
                .contains("already prepared for claim vms/vm");
        assertThat(h.unprepare(TestKubelet.claim("monitoring", "dcgm", ADMIN))).isEmpty();
        assertThat(h.prepare(TestKubelet.claim("vms", "thief", OTHER)).getError())
                .as("the admin claim's Unprepare leaves the owner's hold").contains("already prepared");
    }

    @Test
    void anAdminClaimFirstDoesNotBlockTheOwnerAndSurvivesARestart() {
        assertThat(h.prepare(admin(ADMIN)).getError()).isEmpty();
        Claim owner = h.allocate("vm", OWNER, "gpu", VF);
        assertThat(h.prepare(owner).getError()).isEmpty();

        h.stop();
        h.start();

        // From the checkpoint: the admin claim still holds nothing, the owner still holds the device.
        assertThat(h.prepare(admin(ADMIN)).getError()).isEmpty();
        assertThat(h.prepare(h.allocate("thief", OTHER, "gpu", VF)).getError()).contains("already prepared");
        assertThat(h.unprepare(owner)).isEmpty();
        assertThat(h.prepare(TestKubelet.claim("vms", "thief", OTHER)).getError())
                .as("the device is free once its owner is unprepared, the admin claim still there").isEmpty();
        assertThat(h.unprepare(TestKubelet.claim("monitoring", "dcgm", ADMIN))).isEmpty();
    }
}
