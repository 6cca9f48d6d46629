package dev.vgpu.daemon.cli;

/**
 * A condition of the machine or the environment that stops a command before it starts (a missing file, an
 * unknown source, a malformed environment variable): exit code 2 with this message alone. Usage help is printed
 * only for command-line usage errors ({@link UsageError}).
 */
public final class Refusal extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public Refusal(String message) {
        super(message, null, false, false);
    }
}
