module com.example.lab {
    requires dev.vgpu.deviceplugin;
    requires dev.vgpu.testing;

    provides dev.vgpu.core.spi.DeviceSource with com.example.lab.LabSource;
}
