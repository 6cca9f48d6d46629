package dev.vgpu.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.ResourceName;
import dev.vgpu.nvml.XidPolicy;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SIGHUP's reload, without the signal: valid files apply, an invalid one is one WARN and changes nothing. */
class LiveConfigTest {

    private static final String PGPU = "version: v1\nresources: [{match: {source: passthrough}, name: nvidia.com/pgpu}]\n";
    private static final String GPU = "version: v1\nresources: [{match: {source: passthrough}, name: nvidia.com/gpu}]\n";

    @TempDir
    Path tmp;

    private static CapturedStderr.Outcome<Boolean> capture(BooleanSupplier action) {
        return CapturedStderr.withAnswer(action::getAsBoolean);
    }

    private static String renamedTo(LiveConfig live) {
        return live.rules().renames().get(0).name().name();
    }

    @Test
    void aReloadHappensOnlyWhenAskedAndAValidFileReplacesTheRules() throws Exception {
        Path file = Files.writeString(tmp.resolve("c.yaml"), PGPU);
        LiveConfig live = new LiveConfig(Optional.of(file), "--config", ConfigParser.read(file));
        Files.writeString(file, GPU);

        assertThat(live.reloadIfRequested()).as("not asked").isFalse();
        assertThat(renamedTo(live)).isEqualTo("pgpu");

        live.requestReload();
        live.requestReload();
        CapturedStderr.Outcome<Boolean> applied = capture(live::reloadIfRequested);
        assertThat(applied.answer()).isTrue();
        assertThat(applied.log()).contains("INFO LiveConfig - SIGHUP: --config " + file + " applied from this round:"
                + " rename rules changed, 1 -> 1");
        assertThat(live.rules().renames().get(0).name()).isEqualTo(new ResourceName("gpu"));
        assertThat(live.reloadIfRequested()).as("two requests, one reload").isFalse();

        live.requestReload();
        CapturedStderr.Outcome<Boolean> same = capture(live::reloadIfRequested);
        assertThat(same.answer()).isFalse();
        assertThat(same.log()).contains("read again, unchanged");
    }

    @Test
    void anInvalidFileIsOneWarnAndTheConfigurationInForceStays() throws Exception {
        Path file = Files.writeString(tmp.resolve("c.yaml"), PGPU);
        LiveConfig live = new LiveConfig(Optional.of(file), "VGPU_CONFIG", ConfigParser.read(file));
        ConfigFile before = live.current();

        for (String bad : new String[] {"version: v1\nresources: [{match: {}, name: nvidia.com/a}]\n", "version: v2\n"}) {
            Files.writeString(file, bad);
            live.requestReload();
            CapturedStderr.Outcome<Boolean> refused = capture(live::reloadIfRequested);
            assertThat(refused.answer()).isFalse();
            assertThat(refused.log().lines().filter(l -> l.contains(" WARN "))).singleElement().asString()
                    .contains("SIGHUP: VGPU_CONFIG " + file + " not applied, the configuration in force stays: ");
            assertThat(live.current()).isSameAs(before);
        }
        Files.delete(file);
        live.requestReload();
        assertThat(capture(live::reloadIfRequested).log()).contains("not applied", "the file does not exist");
    }

    @Test
    void ignoredAndRecoverAfterApplyFromTheReloadEnabledAtTheNextStartAndSaysSo() throws Exception {
        Path file = Files.writeString(tmp.resolve("c.yaml"), PGPU);
        LiveConfig live = new LiveConfig(Optional.of(file), "--config", ConfigParser.read(file));
        List<XidPolicy> inForce = new ArrayList<>();

        Files.writeString(file, PGPU + "health: {xid: {ignored: [43], recoverAfter: 10m}}\n");
        live.requestReload();
        CapturedStderr.Outcome<Boolean> reloaded = capture(live::reloadIfRequested);
        assertThat(reloaded.answer()).isTrue();
        inForce.add(live.xidPolicy());
        XidPolicy quiet = XidPolicy.defaults().withIgnored(Set.of(43L)).withRecoverAfter(Duration.ofMinutes(10));
        assertThat(inForce).containsExactly(quiet);
        assertThat(live.xidPolicy()).isEqualTo(quiet);
        assertThat(reloaded.log()).contains("applied from this round: health.xid: XID health on, ignoring XIDs [13,"
                + " 31, 43, 45, 68, 109], no recovery -> XID health on, ignoring XIDs [43], recovery after 10m0s quiet")
                .doesNotContain("WARN");

        Files.writeString(file, PGPU + "health: {xid: {enabled: false, ignored: [43], recoverAfter: 10m}}\n");
        live.requestReload();
        CapturedStderr.Outcome<Boolean> off = capture(live::reloadIfRequested);
        assertThat(off.answer()).isTrue();
        inForce.add(live.xidPolicy());
        assertThat(off.log()).contains("WARN LiveConfig - SIGHUP: --config " + file + " sets health.xid.enabled to"
                + " false, which applies at the next start (NVML events are registered once): XID health stays on");
        assertThat(inForce).as("the policy in force did not change").containsExactly(quiet, quiet);
        assertThat(live.xidPolicy().enabled()).isTrue();

        Files.writeString(file, GPU);
        live.requestReload();
        assertThat(capture(live::reloadIfRequested).answer()).isTrue();
        inForce.add(live.xidPolicy());
        assertThat(inForce).containsExactly(quiet, quiet, XidPolicy.defaults());
    }

    @Test
    void withoutAFileNothingIsEverReloaded() {
        LiveConfig none = LiveConfig.none();
        none.requestReload();
        assertThat(none.reloadIfRequested()).isFalse();
        assertThat(none.current()).isSameAs(ConfigFile.NONE);
        assertThat(none.describe()).isEqualTo("none");
    }

    @Test
    void withoutNvmlTheStartLineSaysXidHealthIsOffWhateverTheConfigurationAsks() throws Exception {
        LiveConfig inline = LiveConfig.inline("VGPU_CONFIG_YAML", ConfigParser.parseText("version: v1\n"));
        assertThat(inline.describe()).contains("XID health on");
        assertThat(inline.describeWithoutNvml()).contains("XID health off").doesNotContain("XID health on");
        assertThat(LiveConfig.none().describeWithoutNvml()).isEqualTo("none");
    }

    @Test
    void aReloadSaysWhatChanged() throws Exception {
        ConfigFile before = ConfigParser.parse("version: v1\n");
        ConfigFile after = ConfigParser.parse("""
                version: v1
                exclude:
                  - address: "0000:65:00.0"
                health:
                  xid:
                    ignored: [13]
                """);
        String changes = LiveConfig.none().changes(before, after);
        assertThat(changes).contains("exclusions changed, 0 -> 1", "health.xid: ").contains("ignoring XIDs [13]")
                .doesNotContain("rename rules");
        assertThat(LiveConfig.none().changes(before, before))
                .isEqualTo("nothing that applies before the next start changed");
    }
}
