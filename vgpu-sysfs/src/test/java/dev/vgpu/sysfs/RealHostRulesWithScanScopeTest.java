package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Host;
import java.nio.file.Path;

/**
 * {@link RealHostRulesContract} on jimfs with a host made for one scan ({@link Host#forScan()}), as the daemon
 * scans: group members' drivers and vendors come from the reads the bus walk shares, which must not change any
 * outcome.
 */
class RealHostRulesWithScanScopeTest extends RealHostRulesContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }

    @Override
    Host host() {
        return super.host().forScan();
    }
}
