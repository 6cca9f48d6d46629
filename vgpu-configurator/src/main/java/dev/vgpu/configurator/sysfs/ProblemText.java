package dev.vgpu.configurator.sysfs;

import dev.vgpu.core.internal.Printable;
import java.io.IOException;

/** Host text and I/O errors made into the words of a card's problems, escaped. Stateless. */
final class ProblemText {

    private ProblemText() {
    }

    /** File text, quoted and escaped. */
    static String quote(String text) {
        return "\"" + Printable.of(text, 80) + "\"";
    }

    /** An I/O error in words: its message, or its class when it has none. */
    static String describe(IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException missing) {
            return "no such file " + Printable.of(String.valueOf(missing.getFile()), 200);
        }
        return Printable.of(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), 200);
    }
}
