/**
 * Host trees for users of the vgpu library: {@link dev.vgpu.testing.SysfsTree} writes a host tree
 * ({@code sys/...} and {@code dev/...}) that looks like a real GPU host, on any file system. No test framework:
 * the JUnit contract every source's tests extend is in {@code vgpu-source-contract}.
 */
module dev.vgpu.testing {
    requires transitive dev.vgpu.core;

    exports dev.vgpu.testing;
}
