module com.example.lab {
    requires dev.vgpu.deviceplugin;

    provides dev.vgpu.core.spi.DeviceSource with com.example.lab.LabSource;
}
