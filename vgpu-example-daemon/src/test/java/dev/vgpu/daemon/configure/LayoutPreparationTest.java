package dev.vgpu.daemon.configure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import dev.vgpu.daemon.agent.NodeAgent;
import dev.vgpu.daemon.cli.Refusal;
import dev.vgpu.testing.SimulatedCard;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testing.VgpuManagerSimulator;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve}'s vGPU layout, as the node agent runs it: applied, counted, named for the scanner, reloaded. */
class LayoutPreparationTest {

    static final String A = "0000:41:00.0";
    static final String LAYOUT = """
            version: v1
            vgpu-configs:
              full:
                - {devices: all, vgpu-devices: {"L40S-12Q": 4}}
            """;

    @TempDir
    Path tmp;

    NodeAgent.HostPreparation preparation(Path file, String select) {
        return LayoutPreparation.of(Optional.of(new LayoutOptions.Selected(file, "--vgpu-config", select)),
                tmp.resolve("host"), true, tmp.resolve("dp"), Optional.empty());
    }

    static String scrape(PrometheusRegistry registry) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void appliesCountsAndNamesTheTypesOfTheCardItFilled() throws Exception {
        VgpuManagerSimulator simulator = VgpuManagerSimulator.create(SysfsTree.at(tmp.resolve("host")),
                SimulatedCard.l40s(A).withTotalVfs(4).withEnabledVfs(0));
        Path file = Files.writeString(tmp.resolve("layouts.yaml"), LAYOUT);
        NodeAgent.HostPreparation preparation = preparation(file, "full");
        PrometheusRegistry registry = new PrometheusRegistry();
        preparation.register(registry);
        VgpuTypeResolver scans = preparation.typeNames(VgpuTypeResolver.none());

        preparation.prepare();

        assertThat(simulator.vgpus(A).values()).containsOnly(1153L);
        String metrics = scrape(registry);
        assertThat(metrics).contains("vgpu_config_apply_total{result=\"applied\"} 1.0",
                "vgpu_config_apply_total{result=\"refused\"} 0.0", "vgpu_config_vfs{profile=\"NVIDIA L40S-12Q\"} 4.0");
        // The card is full: its catalogs list nothing, and the scans still name its VFs' type.
        assertThat(simulator.creatable(SysfsTree.vfAddress(A, 0))).isEmpty();
        VgpuTypeNames named = scans.supportedTypes(PciAddress.parse(A));
        assertThat(named).isInstanceOfSatisfying(VgpuTypeNames.Answered.class,
                answered -> assertThat(answered.names()).containsEntry(1153L, "NVIDIA L40S-12Q"));

        long writes = simulator.writeAttempts();
        preparation.prepare(); // a SIGHUP's reload: the full card is named by the first run, nothing is written
        assertThat(simulator.writeAttempts()).isEqualTo(writes);
        assertThat(scrape(registry)).contains("vgpu_config_apply_total{result=\"unchanged\"} 1.0");

        Files.writeString(file, LAYOUT.replace("vgpu-devices", "vgpu-devicez"));
        preparation.prepare(); // a file broken meanwhile: one WARN, nothing written
        assertThat(scrape(registry)).contains("vgpu_config_apply_total{result=\"invalid\"} 1.0");
        assertThat(simulator.writeAttempts()).isEqualTo(writes);
    }

    @Test
    void withoutALayoutThereIsNothingToPrepareAndABrokenOneStopsTheStart() throws Exception {
        assertThat(LayoutPreparation.of(Optional.empty(), tmp, false, tmp, Optional.empty()))
                .isSameAs(NodeAgent.HostPreparation.NONE);
        Path broken = Files.writeString(tmp.resolve("broken.yaml"), "version: v2\n");
        assertThatThrownBy(() -> preparation(broken, "full")).isInstanceOf(Refusal.class)
                .hasMessage("--vgpu-config " + broken + ": version: \"v2\" is not a version this reads (it reads v1,"
                        + " vgpu-device-manager's)");
    }
}
