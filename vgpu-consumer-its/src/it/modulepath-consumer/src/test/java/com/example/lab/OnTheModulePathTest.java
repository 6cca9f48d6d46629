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
        // The host file reader's provider is found through its module's own provides clause: on Java 17 it says
        // why it does not read natively, which only a provider that ServiceLoader found can say.
        dev.vgpu.hostfiles.HostFiles files = dev.vgpu.hostfiles.HostFiles.load();
        assertEquals("dev.vgpu.hostfiles", files.getClass().getModule().getName());
        System.out.println("HOST FILES: " + files.describe());
        System.out.println("ON THE MODULE PATH: " + getClass().getModule().getName());
    }
}
