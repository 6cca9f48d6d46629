/**
 * Host file access: {@link dev.vgpu.hostfiles.HostFiles}, the bounded reader of a host's small attribute files, links
 * and listings, and {@link dev.vgpu.hostfiles.ScanScope}, the memo and buffer owner of one scan. Knows files, not
 * sysfs: parsing stays with the sources. Its one native part is the system-call reader of its Java 22 classes
 * (libc {@code syscall(2)}: {@code openat}, {@code fstat}, {@code read}, ... through {@code java.lang.foreign}),
 * chosen as a provider ({@code uses}/{@code provides} below); the one file-system fact it relies on is how kernfs
 * answers a read of a page-sized, blockless file (docs/BUILD.md, "The native reader's reads").
 */
module dev.vgpu.hostfiles {
    requires org.slf4j;

    exports dev.vgpu.hostfiles;

    uses dev.vgpu.hostfiles.internal.FileReaderProvider;

    provides dev.vgpu.hostfiles.internal.FileReaderProvider with dev.vgpu.hostfiles.internal.NativeReaderProvider;
}
