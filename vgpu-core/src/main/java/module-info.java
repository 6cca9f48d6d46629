/**
 * Domain values, the {@link dev.vgpu.core.spi.DeviceSource} SPI, immutable snapshots, the pure reconciler and the
 * rescan loop. Knows no sysfs, sockets or native code: sources get everything through {@link dev.vgpu.core.spi.Host},
 * which carries the host's file reader and the scan's scope from {@code dev.vgpu.hostfiles} (required transitively:
 * they are part of the SPI a source is written against).
 *
 * <p>{@code dev.vgpu.core.internal} holds the project's helpers for the sibling modules (escaping outside text for
 * messages, the JSON writer, Go's durations, the owner threads of {@code Threads}, the serial context both adapters
 * own their state in); it is not API and is exported only to the sibling modules that use it.
 */
@SuppressWarnings("module") // the sibling modules need this one, so they are not there when it compiles
module dev.vgpu.core {
    requires transitive dev.vgpu.hostfiles;
    requires org.slf4j;

    exports dev.vgpu.core;
    exports dev.vgpu.core.spi;
    exports dev.vgpu.core.internal to dev.vgpu.attach, dev.vgpu.sysfs, dev.vgpu.nvml, dev.vgpu.deviceplugin,
            dev.vgpu.dra, dev.vgpu.dra.apiserver, dev.vgpu.configurator;

    uses dev.vgpu.core.spi.DeviceSource;
}
