package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.H200;
import static dev.vgpu.deviceplugin.Fixtures.passthrough;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PluginManager#apply(Snapshot)} plans against the snapshot it serves, so callers carry no "before". */
class ApplyPlansItselfTest {

    @TempDir
    Path tmp;

    @Test
    void eachApplyReturnsTheChangeFromTheSnapshotServedBefore() {
        try (Harness h = Harness.start(tmp)) {
            h.host.addGroupNode(41).addGroupNode(42);
            Snapshot one = snapshot(passthrough("0000:41:00.0", 41, 0));
            Snapshot two = snapshot(passthrough("0000:41:00.0", 41, 0), passthrough("0000:42:00.0", 42, 0));

            assertThat(h.manager.apply(one).changes()).singleElement().isInstanceOf(Plan.Add.class);
            h.await(k -> k.resources().containsKey(H200.fullName()));
            assertThat(h.manager.apply(one).isEmpty()).isTrue();

            assertThat(h.manager.apply(two).changes()).singleElement().isInstanceOf(Plan.Update.class);
            h.await(k -> k.resources().get(H200.fullName()).size() == 2);

            assertThat(h.manager.apply(Snapshot.empty()).changes()).singleElement().isInstanceOf(Plan.Remove.class);
            assertThat(h.manager.running()).isEmpty();
        }
    }
}
