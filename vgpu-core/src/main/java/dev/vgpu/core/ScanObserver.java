package dev.vgpu.core;

import dev.vgpu.core.spi.Scanner;
import java.time.Duration;

/**
 * Hears how each rescan round of a {@link RescanLoop} went, for metrics and logs. Called on the loop's thread
 * after each round; must return quickly and should not throw (a throw is logged and ignored).
 */
public interface ScanObserver {

    /** An observer that ignores everything. */
    ScanObserver NONE = new ScanObserver() {
    };

    /**
     * A round scanned the host (sources that failed kept their previous devices) and handed any change to the sink.
     *
     * @param took   how long the round took, scan and apply
     * @param result the snapshot and the sources that failed
     */
    default void scanned(Duration took, Scanner.Result result) {
    }

    /**
     * A round failed as a whole (the scanner or the sink threw); the current devices stay.
     *
     * @param took  how long it ran
     * @param error what was thrown
     */
    default void roundFailed(Duration took, Throwable error) {
    }
}
