package dev.vgpu.daemon.process;

/** The version of this build, from the jar manifest ({@code Implementation-Version}). */
public final class DaemonVersion {

    private DaemonVersion() {
    }

    /** The project version, or {@code (development build)} when run from classes. */
    public static String current() {
        String v = DaemonVersion.class.getPackage().getImplementationVersion();
        return v == null ? "(development build)" : v;
    }
}
