package dev.vgpu.deviceplugin;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What an action wrote to {@code System.err}, where slf4j-simple (test scope) writes the log. */
final class CapturedStderr {

    private CapturedStderr() {
    }

    /** Runs the action with {@code System.err} captured and returns what it wrote. */
    static String of(Runnable action) {
        PrintStream original = System.err;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setErr(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(original);
        }
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
