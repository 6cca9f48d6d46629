package dev.vgpu.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;

/**
 * A thread factory that remembers every thread it made, so that a test asks about the threads of the object it
 * built (all ended after close?) instead of scanning the JVM's threads by name. Shared by the modules' tests through
 * vgpu-core's test jar. Threads: any thread may ask for a thread or read what was made; the list is copy-on-write.
 */
public final class RecordingThreads implements ThreadFactory {

    private final String name;
    private final List<Thread> made = new CopyOnWriteArrayList<>();

    /** Threads named {@code name} (an owner that names its threads itself renames them). */
    public RecordingThreads(String name) {
        this.name = name;
    }

    @Override
    public Thread newThread(Runnable task) {
        Thread thread = new Thread(task, name);
        made.add(thread);
        return thread;
    }

    /** How many of the threads made are alive now. */
    public long alive() {
        return made.stream().filter(Thread::isAlive).count();
    }

    /** The names of the threads made that are alive now, sorted (for assertion messages). */
    public List<String> aliveNames() {
        return made.stream().filter(Thread::isAlive).map(Thread::getName).sorted().toList();
    }

    /** How many threads were made. */
    public int made() {
        return made.size();
    }

    /** Whether {@code thread} is one this factory made. */
    public boolean made(Thread thread) {
        return made.contains(thread);
    }

    /** The thread made last. */
    public Thread last() {
        if (made.isEmpty()) {
            throw new AssertionError("no thread was made");
        }
        return made.get(made.size() - 1);
    }
}
