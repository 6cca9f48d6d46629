package dev.vgpu.testing;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import java.nio.file.FileSystem;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;

/** {@link SysfsTree} on an in-memory unix file system. */
class JimfsSysfsTreeTest extends SysfsTreeContractTest {

    private FileSystem fs;

    @Override
    Path newRoot() {
        fs = Jimfs.newFileSystem(Configuration.unix());
        return fs.getPath("/host");
    }

    @AfterEach
    void closeFs() throws Exception {
        fs.close();
    }
}
