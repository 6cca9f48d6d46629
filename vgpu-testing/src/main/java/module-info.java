/**
 * Test fixtures for users of the vgpu library: {@link dev.vgpu.testing.SysfsTree} writes a host tree
 * ({@code sys/...} and {@code dev/...}) that looks like a real GPU host, on any file system;
 * {@link dev.vgpu.testing.DeviceSourceContract} is the generic JUnit 5 contract a source's tests extend.
 */
module dev.vgpu.testing {
    requires transitive dev.vgpu.core;
    requires transitive org.junit.jupiter.api;

    exports dev.vgpu.testing;
}
