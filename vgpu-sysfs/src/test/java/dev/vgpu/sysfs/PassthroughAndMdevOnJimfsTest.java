package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link PassthroughAndMdevContract} on an in-memory unix file system. */
class PassthroughAndMdevOnJimfsTest extends PassthroughAndMdevContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }
}
