package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Discovery;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link HostileInputsContract} on an in-memory unix file system, plus the large hostile bus (fast here). */
class HostileInputsOnJimfsTest extends HostileInputsContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }

    @Test
    void aHundredThousandDanglingBusEntriesKeepAHundredRecordsPerSource() {
        danglingBusEntries(100_000);
        oneGpu();

        Snapshot snapshot = Snapshot.builder().add("passthrough", scan(PASSTHROUGH))
                .add("vendor-vfio", scan(VENDOR)).build();

        assertThat(snapshot.skipped()).hasSize(2 * Discovery.LISTED_SKIPS);
        assertThat(snapshot.skippedCount()).isEqualTo(200_000);
        assertThat(snapshot.unlistedSkips()).isEqualTo(Map.of("passthrough", 99_900, "vendor-vfio", 99_900));
        assertThat(snapshot.discoveryOf("passthrough").skippedCount()).isEqualTo(100_000);
        assertThat(snapshot.deviceCount()).isOne();
    }
}
