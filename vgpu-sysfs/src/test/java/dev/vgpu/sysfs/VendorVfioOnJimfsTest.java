package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link VendorVfioContract} on an in-memory unix file system. */
class VendorVfioOnJimfsTest extends VendorVfioContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }
}
