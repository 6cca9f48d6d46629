package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Host;
import java.nio.file.Path;

/**
 * {@link PassthroughAndMdevContract} on jimfs with a host made for one scan ({@link Host#forScan()}), as the
 * daemon scans: the reads that go through the scan scope must not change any outcome.
 */
class PassthroughAndMdevWithScanScopeTest extends PassthroughAndMdevContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }

    @Override
    Host host() {
        return super.host().forScan();
    }
}
