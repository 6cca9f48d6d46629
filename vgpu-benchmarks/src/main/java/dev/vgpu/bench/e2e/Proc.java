package dev.vgpu.bench.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** What {@code /proc} says about a running process: resident memory, threads, descriptors, one thread's CPU. */
final class Proc {

    private static final long TICK_NS = 10_000_000L; // USER_HZ 100 on Linux

    private final Path dir;

    Proc(long pid) {
        this.dir = Path.of("/proc", Long.toString(pid));
    }

    /** A {@code kB} field of {@code status} ({@code VmRSS}, {@code VmHWM}) in KiB, or a count ({@code Threads}). */
    long status(String field) throws IOException {
        for (String line : Files.readAllLines(dir.resolve("status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).strip().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no " + field + " in " + dir.resolve("status"));
    }

    /**
     * A {@code kB} field of {@code smaps_rollup} in KiB: {@code Rss}, {@code Anonymous} (what the process wrote:
     * heap, metaspace, relocated archive pages); {@code Rss} minus {@code Anonymous} is file-backed (the mapped jar,
     * libraries, an archive mapped where it was made) or shared.
     */
    long rollup(String field) throws IOException {
        for (String line : Files.readAllLines(dir.resolve("smaps_rollup"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).strip().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no " + field + " in " + dir.resolve("smaps_rollup"));
    }

    long fds() throws IOException {
        try (Stream<Path> fds = Files.list(dir.resolve("fd"))) {
            return fds.count();
        }
    }

    /** User plus system CPU of the threads named {@code name}, in ns (10 ms resolution). */
    long threadCpuNs(String name) throws IOException {
        long ticks = 0;
        List<Path> tasks;
        try (Stream<Path> list = Files.list(dir.resolve("task"))) {
            tasks = list.toList();
        }
        for (Path task : tasks) {
            try {
                if (!Files.readString(task.resolve("comm")).strip().equals(name)) {
                    continue;
                }
                String stat = Files.readString(task.resolve("stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
            } catch (NoSuchFileException e) {
                // the thread ended meanwhile
            }
        }
        return ticks * TICK_NS;
    }

    /** User plus system CPU of the whole process, in ns. */
    long processCpuNs() throws IOException {
        String stat = Files.readString(dir.resolve("stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NS;
    }
}
