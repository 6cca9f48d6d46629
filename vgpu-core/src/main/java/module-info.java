/**
 * Domain values, the {@link dev.vgpu.core.spi.DeviceSource} SPI, immutable snapshots and the pure
 * reconciler. Knows no sysfs or sockets: sources get everything through {@link dev.vgpu.core.spi.Host}. Its one
 * native part is the attribute reader of its Java 22 classes (libc {@code openat}, {@code fstat}, {@code read}
 * through {@code java.lang.foreign}), which reads files, not devices; the one file-system fact it relies on is how
 * kernfs answers a read of a page-sized, blockless file (docs/BUILD.md, "The native reader's reads").
 *
 * <p>{@code dev.vgpu.core.internal} holds the project's helpers for the sibling modules (escaping outside text for
 * messages, the JSON writer, Go's duration printing, the owner threads of {@code Threads}); it is not API and is exported only to the sibling modules that use it.
 */
@SuppressWarnings("module") // the sibling modules need this one, so they are not there when it compiles
module dev.vgpu.core {
    requires org.slf4j;

    exports dev.vgpu.core;
    exports dev.vgpu.core.spi;
    exports dev.vgpu.core.internal to dev.vgpu.attach, dev.vgpu.sysfs, dev.vgpu.nvml, dev.vgpu.deviceplugin, dev.vgpu.dra,
            dev.vgpu.dra.apiserver, dev.vgpu.configurator;

    uses dev.vgpu.core.spi.DeviceSource;
}
