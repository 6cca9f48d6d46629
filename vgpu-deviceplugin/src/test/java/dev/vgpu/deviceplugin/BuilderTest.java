package dev.vgpu.deviceplugin;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.Plan;
import dev.vgpu.core.Snapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Nonsense configuration is rejected at once with a message that names the fix. */
class BuilderTest {

    @Test
    void healthPollIntervalMustBePositive() {
        assertThatThrownBy(() -> PluginManager.builder().healthPollInterval(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
    }

    @Test
    void backoffNeedsPositiveInitialNotAboveMax() {
        assertThatThrownBy(() -> PluginManager.builder().registrationBackoff(Duration.ofSeconds(2),
                Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 < initial <= max");
        assertThatThrownBy(() -> PluginManager.builder().registrationBackoff(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void applyAfterCloseIsRefused(@TempDir Path tmp) {
        PluginManager manager = PluginManager.builder().hostRoot(tmp).devicePluginDir(tmp.resolve("dp")).build();
        manager.close();
        manager.close();

        assertThatThrownBy(() -> manager.apply(Snapshot.empty(), new Plan(List.of()))).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
