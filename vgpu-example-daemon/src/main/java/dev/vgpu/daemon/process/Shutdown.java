package dev.vgpu.daemon.process;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Process exit: SIGTERM and SIGINT run the cleanup in a shutdown hook and end the process with status 0;
 * an exit the program asks for itself keeps its own status. Process-wide by nature, like signals.
 */
public final class Shutdown {

    private static final AtomicBoolean EXPLICIT_EXIT = new AtomicBoolean();

    private Shutdown() {
    }

    /** Exits with a status of the program's choosing (the shutdown hook then keeps it). */
    public static void exit(int status) {
        EXPLICIT_EXIT.set(true);
        System.exit(status);
    }

    /** Runs {@code cleanup} when the JVM is asked to stop; a signal-caused stop then exits with status 0. */
    public static void onStop(Runnable cleanup) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                cleanup.run();
            } finally {
                if (!EXPLICIT_EXIT.get()) {
                    Runtime.getRuntime().halt(0);
                }
            }
        }, "vgpu-shutdown"));
    }
}
