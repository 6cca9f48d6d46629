package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.daemon.CliTest.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A usage error prints the line that matters, the synopsis and where the help is: not the whole help. */
class ShortUsageTest {

    @ParameterizedTest
    @ValueSource(strings = {"serve", "discover", "demo"})
    void aCommandsUsageErrorIsTheMessageTheSynopsisAndAHint(String command) {
        Result r = CliTest.run(command, "--colour");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("Unknown option: '--colour'\nUsage: vgpu-daemon " + command
                + " [-h|-V] [OPTION...]\nRun 'vgpu-daemon " + command + " --help' for the options.\n");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void optionsAloneMeanServeAndTheirUsageErrorIsServes() {
        Result r = CliTest.run("--rescan-interval=30s", "--colour");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).endsWith("Run 'vgpu-daemon serve --help' for the options.\n");
    }

    @Test
    void anUnknownCommandListsTheCommands() {
        Result r = CliTest.run("discovr");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("Unknown command: 'discovr'\nPossible solutions: discover\n"
                + "Usage: vgpu-daemon [-h|-V] [COMMAND]\nCommands: serve, discover, configure, demo, kubelet\n"
                + "Run 'vgpu-daemon --help' for more.\n");
    }

    @Test
    void theHelpItPointsAtIsWhole() {
        assertThat(CliTest.run("serve", "--help").out().lines().count()).isGreaterThan(20);
    }
}
