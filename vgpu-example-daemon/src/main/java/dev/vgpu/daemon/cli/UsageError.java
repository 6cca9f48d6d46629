package dev.vgpu.daemon.cli;

/**
 * A command line the daemon cannot run: an unknown option, a missing or malformed value. Exit code 2, this message and
 * the usage help of the command (compare {@link Refusal}, which prints no usage help).
 */
public final class UsageError extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The command whose usage help goes with the message; null = the one being run. */
    private final transient CliCommand command;

    public UsageError(String message) {
        this(null, message);
    }

    public UsageError(CliCommand command, String message) {
        super(message, null, false, false);
        this.command = command;
    }

    /** The command whose help to print; null for the one being run, or the top level when none was chosen. */
    public CliCommand command() {
        return command;
    }
}
