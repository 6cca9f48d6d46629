package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link HostileInputsContract} on the default file system under a temporary directory. */
class HostileInputsOnDefaultFsTest extends HostileInputsContract {

    @Override
    Path newRoot() {
        return tempDir;
    }
}
