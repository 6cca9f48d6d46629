/**
 * Test fixtures for users of the vgpu library: {@link dev.vgpu.testing.SysfsTree} writes a host tree
 * ({@code sys/...} and {@code dev/...}) that looks like a real GPU host, on any file system.
 */
module dev.vgpu.testing {
    requires transitive dev.vgpu.core;

    exports dev.vgpu.testing;
}
