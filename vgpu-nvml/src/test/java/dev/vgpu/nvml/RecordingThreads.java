package dev.vgpu.nvml;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;

/**
 * A thread factory that remembers every thread it made, so that a test asks about the threads of the object it
 * built instead of scanning the JVM's threads by name. Threads: any thread may ask for a thread or read the list.
 */
final class RecordingThreads implements ThreadFactory {

    private final String name;
    private final List<Thread> made = new CopyOnWriteArrayList<>();

    RecordingThreads(String name) {
        this.name = name;
    }

    @Override
    public Thread newThread(Runnable task) {
        Thread thread = new Thread(task, name);
        made.add(thread);
        return thread;
    }

    /** How many of the threads made are still alive. */
    long alive() {
        return made.stream().filter(Thread::isAlive).count();
    }

    /** The thread made last. */
    Thread last() {
        if (made.isEmpty()) {
            throw new AssertionError("no thread was made");
        }
        return made.get(made.size() - 1);
    }

    /** How many threads were made. */
    int made() {
        return made.size();
    }
}
