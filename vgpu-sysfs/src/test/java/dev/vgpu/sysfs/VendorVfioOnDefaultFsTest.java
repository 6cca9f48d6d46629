package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link VendorVfioContract} on the default file system under a temporary directory. */
class VendorVfioOnDefaultFsTest extends VendorVfioContract {

    @Override
    Path newRoot() {
        return tempDir;
    }
}
