package com.example.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Not in the README: proves that Surefire ran this consumer's tests inside its module, not on the class path. */
class OnTheModulePathTest {
    @Test
    void theTestsRunInTheModule() {
        assertEquals("com.example.lab", LabSource.class.getModule().getName());
        assertEquals("dev.vgpu.deviceplugin",
                dev.vgpu.deviceplugin.PluginManager.class.getModule().getName());
        System.out.println("ON THE MODULE PATH: " + getClass().getModule().getName());
    }
}
