package dev.vgpu.sysfs;

import dev.vgpu.core.spi.Host;

/**
 * {@link HostileInputsOnDefaultFsTest} with a host made for one scan ({@link Host#forScan()}), as the daemon
 * scans: a failure kept in the scan scope (a FIFO where {@code vendor} belongs, a dangling bus link) must be
 * described exactly as the same failure read without one.
 */
class HostileInputsOnDefaultFsWithScanScopeTest extends HostileInputsOnDefaultFsTest {

    @Override
    Host host() {
        return super.host().forScan();
    }
}
