module com.example.vgpulayout {
    requires dev.vgpu.configurator;
    requires dev.vgpu.testing;
}
