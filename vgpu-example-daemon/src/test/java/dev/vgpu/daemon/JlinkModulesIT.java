package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Dockerfile's jlink module list is what jdeps says the packaged jar needs: a dependency that brings a new
 * module (or drops one) fails here rather than at the first start of an image.
 */
class JlinkModulesIT {

    @Test
    void theDockerfileLinksExactlyTheModulesJdepsFindsInThePackagedJar(@TempDir Path tmp) throws Exception {
        Path dockerfile = Path.of("").toAbsolutePath().getParent().resolve("Dockerfile");
        Matcher m = Pattern.compile("(?m)^ARG JLINK_MODULES=(\\S+)$").matcher(Files.readString(dockerfile));
        assertThat(m.find()).as("ARG JLINK_MODULES in %s", dockerfile).isTrue();
        String declared = m.group(1);

        // The Dockerfile's JDK stage is a JDK 25, whose jdeps also reads the jar's Java 22 classes.
        Path jdeps = DaemonProcess.runtimeJdk().resolve("bin/jdeps");
        Path out = tmp.resolve("jdeps.out");
        Process p = new ProcessBuilder(List.of(jdeps.toString(), "--print-module-deps", "--ignore-missing-deps",
                "--multi-release", "25", DaemonProcess.jar().toString()))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("jdeps finished").isTrue();
        String printed = Files.readString(out, StandardCharsets.UTF_8).strip();
        assertThat(p.exitValue()).as(printed).isZero();
        assertThat(printed).as("jdeps output; update ARG JLINK_MODULES in the Dockerfile").isEqualTo(declared);
    }
}
