package dev.vgpu.testing;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** {@link SysfsTree} on the default file system under a temporary directory. */
class DefaultFsSysfsTreeTest extends SysfsTreeContractTest {

    @TempDir
    Path tempDir;

    @Override
    Path newRoot() {
        return tempDir;
    }
}
