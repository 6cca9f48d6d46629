package dev.vgpu.bench.e2e;

/** A JVM that does nothing for a while: the resident-memory and thread baseline of a process with given flags. */
public final class Idle {

    private Idle() {
    }

    /**
     * Sleeps for the given seconds (default 60).
     *
     * @param args optional seconds
     * @throws InterruptedException when interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        System.out.println("idle");
        System.out.flush();
        Thread.sleep(1000L * (args.length > 0 ? Integer.parseInt(args[0]) : 60));
    }
}
