package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link RealHostRulesContract} on the default file system under a temporary directory. */
class RealHostRulesOnDefaultFsTest extends RealHostRulesContract {

    @Override
    Path newRoot() {
        return tempDir;
    }
}
