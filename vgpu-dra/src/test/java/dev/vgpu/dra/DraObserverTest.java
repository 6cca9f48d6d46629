package dev.vgpu.dra;

import static dev.vgpu.dra.DraHarness.VF;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.dra.grpc.v1.Claim;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the plugin tells its {@link DraObserver} (the daemon's metrics): one count per answered claim by result, and
 * the number of prepared claims after every call and at start, restored from the checkpoint. Each call returns only
 * after the claims thread reported it, so the counts are read after the call without waiting.
 */
class DraObserverTest {

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

    @Test
    void everyAnsweredClaimIsCountedByResultAndThePreparedCountFollowsAcrossARestart() {
        assertThat(h.heard.preparedClaims).hasValue(0);
        Claim ok = h.allocate("vf", A, "gpu", VF);
        Claim unknown = h.allocate("gone", B, "gpu", "pci-0000-99-00-0");

        h.kubelet.prepare(h.plugin.draSocket(), ok, unknown);

        assertThat(h.heard.prepared).hasValue(1);
        assertThat(h.heard.prepareFailed).hasValue(1);
        assertThat(h.heard.preparedClaims).hasValue(1);

        h.stop();
        h.heard.preparedClaims.set(-1);
        h.start();
        assertThat(h.heard.preparedClaims).as("restored from the checkpoint").hasValue(1);

        assertThat(h.unprepare(ok)).isEmpty();
        assertThat(h.unprepare(TestKubelet.claim("vms", "never", B))).isEmpty();
        assertThat(h.heard.unprepared).hasValue(2);
        assertThat(h.heard.unprepareFailed).hasValue(0);
        assertThat(h.heard.preparedClaims).hasValue(0);
    }
}
