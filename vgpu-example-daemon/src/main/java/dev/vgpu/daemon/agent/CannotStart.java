package dev.vgpu.daemon.agent;

/**
 * A condition that stops {@code serve} before it serves, in either mode (a metrics port that is taken, an unusable
 * kubeconfig, a socket that cannot be bound): its message, in words, becomes an exit 2.
 */
public final class CannotStart extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public CannotStart(String message, Throwable cause) {
        super(message, cause);
    }
}
