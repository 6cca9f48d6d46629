package dev.vgpu.hostfiles.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * The system calls of {@link NativeReader}, linked once per {@link NativeReaderProvider} and shared by its readers:
 * every call goes by number through the C library's {@code syscall(2)}, through one downcall handle and its
 * errno-capturing twin (each distinct downcall shape costs its own adapters when it is made, which a process pays at
 * its first scan: BENCHMARKS.md, "Start-up"), with this architecture's numbers, flag values and {@code struct stat}
 * offsets. Immutable.
 */
final class Syscalls {

    static final int AT_FDCWD = -100;
    static final int O_RDONLY = 0;
    static final int O_CLOEXEC = 02000000;
    /** The auxiliary vector's entry for the page size. */
    private static final long AT_PAGESZ = 6;

    /** The C library's {@code syscall(2)}: every call of the reader, by number, without capturing errno. */
    final MethodHandle sys;
    /** The same, capturing errno: made only after a call that failed ({@link NativeReader}'s class comment). */
    final MethodHandle sysErrno;
    /** This architecture's system call numbers. */
    final Numbers nr;
    final VarHandle errno;
    final long stateBytes;
    /** {@code O_DIRECTORY}, whose value differs between x86_64 and aarch64. */
    final int directoryFlag;
    /** Offset of {@code st_mode} in {@code struct stat}, which differs between x86_64 and aarch64. */
    final long modeOffset;
    /** The system's page size ({@link #pageSizeFromAuxv}): what kernfs reports as a text attribute's size. */
    final long pageSize;

    /**
     * The system call numbers of one architecture: the generic table's on aarch64, x86_64's own there. {@code fstatat}
     * is the kernel's {@code newfstatat}, whose {@code struct stat} is the C library's on both.
     */
    record Numbers(long read, long close, long fstat, long fstatat, long openat, long readlinkat, long getdents64) {
        static final Numbers X86_64 = new Numbers(0, 3, 5, 262, 257, 267, 217);
        static final Numbers AARCH64 = new Numbers(63, 57, 80, 79, 56, 78, 61);
    }

    private Syscalls(SymbolLookup libc, Linker linker, Numbers nr, int directoryFlag, long modeOffset) {
        // syscall(2) takes the number and four words.
        FunctionDescriptor words = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
        MemorySegment syscall = find(libc, "syscall");
        this.sys = linker.downcallHandle(syscall, words, Linker.Option.firstVariadicArg(1));
        this.sysErrno = linker.downcallHandle(syscall, words, Linker.Option.captureCallState("errno"),
                Linker.Option.firstVariadicArg(1));
        this.nr = nr;
        this.errno = Linker.Option.captureStateLayout().varHandle(MemoryLayout.PathElement.groupElement("errno"));
        this.stateBytes = Linker.Option.captureStateLayout().byteSize();
        this.directoryFlag = directoryFlag;
        this.modeOffset = modeOffset;
        this.pageSize = pageSizeFromAuxv();
    }

    /**
     * The calls of x86_64 ({@code x86}) or aarch64.
     *
     * @throws IllegalArgumentException when the C library has no {@code syscall}
     */
    static Syscalls link(SymbolLookup libc, Linker linker, boolean x86) {
        return x86 ? new Syscalls(libc, linker, Numbers.X86_64, 0200000, 24)
                : new Syscalls(libc, linker, Numbers.AARCH64, 040000, 16);
    }

    private static MemorySegment find(SymbolLookup libc, String name) {
        Optional<MemorySegment> symbol = libc.find(name);
        if (symbol.isEmpty()) {
            throw new IllegalArgumentException("the C library has no " + name);
        }
        return symbol.get();
    }

    /**
     * The system's page size, what kernfs reports as a text attribute's size: the {@code AT_PAGESZ} entry of
     * {@code /proc/self/auxv} (pairs of native words, as the kernel handed them to the process). 4096 when it cannot
     * be read: a wrong size only loses the early stop of a read ({@link NativeReader}'s class comment), never a byte.
     */
    private long pageSizeFromAuxv() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment file = arena.allocateFrom("/proc/self/auxv");
            MemorySegment vector = arena.allocate(4096, 8);
            long fd = (long) sys.invokeExact(nr.openat(), (long) AT_FDCWD, file.address(),
                    (long) (O_RDONLY | O_CLOEXEC), 0L);
            if (fd < 0) {
                return 4096;
            }
            long length = 0;
            try {
                while (length < vector.byteSize()) {
                    long n = (long) sys.invokeExact(nr.read(), fd, vector.address() + length,
                            vector.byteSize() - length, 0L);
                    if (n <= 0) {
                        break;
                    }
                    length += n;
                }
            } finally {
                long ignored = (long) sys.invokeExact(nr.close(), fd, 0L, 0L, 0L);
            }
            for (long at = 0; at + 16 <= length; at += 16) {
                if (vector.get(ValueLayout.JAVA_LONG, at) == AT_PAGESZ) {
                    long size = vector.get(ValueLayout.JAVA_LONG, at + 8);
                    return size > 0 ? size : 4096;
                }
            }
            return 4096;
        } catch (Throwable e) {
            if (e instanceof Error error) {
                throw error;
            }
            return 4096;
        }
    }
}
