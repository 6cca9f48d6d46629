package dev.vgpu.core.internal;

import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps the bodies of scheduled tasks. A periodic task that throws is cancelled by its executor without a word,
 * so every task catches everything at its top, logs it with the task's name and keeps its schedule. A
 * {@link VirtualMachineError} (out of memory, for example) is logged as fatal and rethrown: the process is in no
 * state to go on, and the daemon's JVM flags end it on such errors; an owner that must also say so on its liveness
 * probe (a library throws {@code OutOfDirectMemoryError}, which those flags do not see) passes a fatal listener.
 */
public final class Guarded {

    private static final Logger LOG = LoggerFactory.getLogger(Guarded.class);

    private Guarded() {
    }

    /** A task that runs {@code body} and reports whatever it throws under {@code name}. */
    public static Runnable task(String name, Runnable body) {
        return task(name, body, error -> { });
    }

    /** As {@link #task(String, Runnable)}, telling {@code fatal} of a JVM error before it is rethrown. */
    public static Runnable task(String name, Runnable body, Consumer<VirtualMachineError> fatal) {
        return () -> {
            try {
                body.run();
            } catch (Throwable e) {
                report(name, e, fatal);
            }
        };
    }

    /** Logs a task's failure; rethrows a JVM error after saying so. */
    public static void report(String name, Throwable e) {
        report(name, e, error -> { });
    }

    /** As {@link #report(String, Throwable)}, telling {@code fatal} of a JVM error before it is rethrown. */
    public static void report(String name, Throwable e, Consumer<VirtualMachineError> fatal) {
        if (e instanceof VirtualMachineError error) {
            LOG.error("Task {} hit a fatal JVM error; this task stops: {}", name, error.toString(), error);
            fatal.accept(error);
            throw error;
        }
        LOG.error("Task {} failed and keeps its schedule: {}", name, e.toString(), e);
    }
}
