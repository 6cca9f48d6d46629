module com.example.dralab {
    requires dev.vgpu.dra;
    requires dev.vgpu.testing;
}
