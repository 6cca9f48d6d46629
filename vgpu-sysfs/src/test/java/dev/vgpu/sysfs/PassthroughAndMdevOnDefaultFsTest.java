package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link PassthroughAndMdevContract} on the default file system under a temporary directory. */
class PassthroughAndMdevOnDefaultFsTest extends PassthroughAndMdevContract {

    @Override
    Path newRoot() {
        return tempDir;
    }
}
