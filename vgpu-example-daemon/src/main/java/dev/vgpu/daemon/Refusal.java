package dev.vgpu.daemon;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * A condition of the machine or the environment that stops a command before it starts (a missing file, an
 * unknown source, a malformed environment variable): exit code 2 with this message alone. Usage help is printed
 * only for command-line usage errors, which picocli raises itself.
 */
final class Refusal extends ParameterException {

    private static final long serialVersionUID = 1L;

    Refusal(CommandLine commandLine, String message) {
        super(commandLine, message);
    }
}
