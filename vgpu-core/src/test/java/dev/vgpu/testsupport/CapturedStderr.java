package dev.vgpu.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * What an action wrote to {@code System.err}, where slf4j-simple (every module's test-scope logger) writes the log.
 * Shared by the modules' tests through vgpu-core's test jar (docs/BUILD.md, "Test helpers"). Threads: the capture
 * replaces the JVM-wide {@code System.err} while the action runs, so lines other threads log meanwhile land in it too.
 */
public final class CapturedStderr {

    private CapturedStderr() {
    }

    /** Runs the action with {@code System.err} captured and returns what it wrote. */
    public static String of(Runnable action) {
        return withAnswer(() -> {
            action.run();
            return null;
        }).log();
    }

    /**
     * Runs the action with {@code System.err} captured and returns its answer with what it wrote.
     *
     * @param <T> the action's answer
     */
    public static <T> Outcome<T> withAnswer(Supplier<T> action) {
        PrintStream original = System.err;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setErr(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        T answer;
        try {
            answer = action.get();
        } finally {
            System.setErr(original);
        }
        return new Outcome<>(answer, buffer.toString(StandardCharsets.UTF_8));
    }

    /**
     * An action's answer and its log.
     *
     * @param <T> the action's answer
     */
    public record Outcome<T>(T answer, String log) {
    }
}
