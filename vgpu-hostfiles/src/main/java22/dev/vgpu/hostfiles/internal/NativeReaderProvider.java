package dev.vgpu.hostfiles.internal;

import java.lang.foreign.Linker;

/**
 * The system-call reader of Java 22 and later ({@link NativeReader}): available on Linux on x86_64 and aarch64 when
 * this module may make native calls (java {@code --enable-native-access}, or the manifest attribute
 * {@code Enable-Native-Access: ALL-UNNAMED} of an executable jar) and the C library has {@code syscall(2)}. It
 * links its calls once, when it is made; its readers share them. Priority 10: wherever it runs it is preferred to
 * {@code java.io}/NIO alone.
 */
public final class NativeReaderProvider implements FileReaderProvider {

    /** The calls every reader of this provider makes; null when the reader cannot run here. */
    private final Syscalls calls;
    /** Why not, when {@link #calls} is null. */
    private final String unavailable;

    /** Found by {@link java.util.ServiceLoader}; checks the platform and links the calls at once. */
    public NativeReaderProvider() {
        String why = null;
        Syscalls linked = null;
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        Module module = NativeReaderProvider.class.getModule();
        if (!os.equals("Linux")) {
            why = "the operating system is " + os + ", not Linux";
        } else if (!arch.equals("amd64") && !arch.equals("x86_64") && !arch.equals("aarch64")) {
            why = "the processor architecture " + arch + " has no known struct stat layout here";
        } else if (!module.isNativeAccessEnabled()) {
            why = "native access is not enabled (java --enable-native-access="
                    + (module.isNamed() ? module.getName() : "ALL-UNNAMED")
                    + ", or the manifest attribute Enable-Native-Access: ALL-UNNAMED of an executable jar)";
        } else {
            try {
                linked = Syscalls.link(Linker.nativeLinker().defaultLookup(), Linker.nativeLinker(),
                        !arch.equals("aarch64"));
            } catch (IllegalArgumentException | UnsupportedOperationException | IllegalCallerException e) {
                why = e.getMessage();
            }
        }
        this.calls = linked;
        this.unavailable = why;
    }

    @Override
    public boolean isAvailable() {
        return calls != null;
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public String describe() {
        return calls != null
                ? "native (java.lang.foreign: syscall openat, fstat, newfstatat, read, readlinkat, getdents64, close)"
                : "no native reader: " + unavailable;
    }

    @Override
    public FileReader open(KnownTexts texts) {
        if (calls == null) {
            throw new UnsupportedOperationException(describe());
        }
        return new NativeReader(calls, texts);
    }
}
