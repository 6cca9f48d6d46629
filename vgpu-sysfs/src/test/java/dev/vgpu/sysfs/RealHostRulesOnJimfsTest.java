package dev.vgpu.sysfs;

import java.nio.file.Path;

/** {@link RealHostRulesContract} on an in-memory unix file system. */
class RealHostRulesOnJimfsTest extends RealHostRulesContract {

    @Override
    Path newRoot() {
        return jimfsRoot();
    }
}
