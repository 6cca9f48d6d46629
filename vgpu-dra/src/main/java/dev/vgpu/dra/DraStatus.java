package dev.vgpu.dra;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the DRA plugin is doing now, for probes and metrics ({@link DraPlugin#status()}): published by its owner,
 * read by any thread without waiting.
 *
 * @param registration     what the kubelet last said about the registration
 * @param missingSockets   the plugin's sockets the last check found gone or replaced, until they are served again
 * @param unhealthyIds     the devices found unhealthy, sorted
 * @param preparedClaims   claims prepared now
 * @param healthStreams    open {@code DRAResourceHealth} streams
 * @param failure          why the plugin cannot be trusted to serve any more (a JVM error on one of its threads, its
 *                         event loop ended); once set it stays, and a liveness probe should fail on it
 */
public record DraStatus(KubeletRegistration registration, List<String> missingSockets, List<String> unhealthyIds,
                        int preparedClaims, int healthStreams, Optional<String> failure) {

    /** Copies the lists. */
    public DraStatus {
        Objects.requireNonNull(registration, "registration");
        missingSockets = List.copyOf(missingSockets);
        unhealthyIds = List.copyOf(unhealthyIds);
        Objects.requireNonNull(failure, "failure");
    }
}
