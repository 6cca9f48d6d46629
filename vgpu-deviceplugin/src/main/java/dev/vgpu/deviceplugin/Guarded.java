package dev.vgpu.deviceplugin;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps the bodies of scheduled tasks. A periodic task that throws is cancelled by its executor without a word,
 * so every task catches everything at its top, logs it with the task's name and keeps its schedule. A
 * {@link VirtualMachineError} (out of memory, for example) is logged as fatal and rethrown: the process is in no
 * state to go on, and the daemon's JVM flags end it on such errors.
 */
final class Guarded {

    private static final Logger LOG = LoggerFactory.getLogger(Guarded.class);

    private Guarded() {
    }

    /** A task that runs {@code body} and reports whatever it throws under {@code name}. */
    static Runnable task(String name, Runnable body) {
        return () -> {
            try {
                body.run();
            } catch (Throwable e) {
                report(name, e);
            }
        };
    }

    /** Logs a task's failure; rethrows a JVM error after saying so. */
    static void report(String name, Throwable e) {
        if (e instanceof VirtualMachineError fatal) {
            LOG.error("Task {} hit a fatal JVM error; this task stops: {}", name, fatal.toString(), fatal);
            throw fatal;
        }
        LOG.error("Task {} failed and keeps its schedule: {}", name, e.toString(), e);
    }
}
