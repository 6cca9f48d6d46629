package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link HostileInputsContract} on an in-memory unix file system. */
class HostileInputsOnJimfsTest extends HostileInputsContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }
}
