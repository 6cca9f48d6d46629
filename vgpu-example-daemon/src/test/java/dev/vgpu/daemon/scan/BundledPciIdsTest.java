package dev.vgpu.daemon.scan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.ResourceName;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The pinned pci.ids section in the jar (docs/BUILD.md, "The bundled pci.ids"): upstream's names for every id upstream
 * knows, newer ids added, and no shipped resource name ever changing.
 */
class BundledPciIdsTest {

    private static final Pattern DEVICE_LINE = Pattern.compile("^\t([0-9a-f]{4})  (.*)$", Pattern.MULTILINE);

    @Test
    void everyDeviceTheUpstreamPluginsPciIdsNamesHasThatNameInTheBundledSection() throws IOException {
        String upstream = resource("/pci.ids-nvidia-2025.07.11-upstream");
        PciIds upstreamNames = PciIds.parse(new StringReader(upstream), Set.of(PciIds.NVIDIA));
        PciIds bundled = PciIdsDatabase.bundled().names();
        Map<String, String> ids = deviceIds(upstream);
        assertThat(ids).hasSizeGreaterThan(1900);
        ids.keySet().forEach(id -> assertThat(bundled.deviceName(PciIds.NVIDIA, id)).as("10de:" + id)
                .isEqualTo(upstreamNames.deviceName(PciIds.NVIDIA, id)));
        assertThat(resourceName(bundled, "2c31")).isEqualTo("GB203GL_RTX_PRO_4500_BLACKWELL");
    }

    @Test
    void idsOnlyTheNewerPciIdsKnowsAreNamedToo() {
        PciIds bundled = PciIdsDatabase.bundled().names();
        assertThat(resourceName(bundled, "2909")).isEqualTo("GB100_HGX_B200_168GB");
        assertThat(resourceName(bundled, "230c")).isEqualTo("GH100_H20_NVL16");
    }

    /** The table in src/test/resources is the record of what shipped; a rebuild of the section must keep it. */
    @Test
    void theBundledSectionGivesExactlyTheShippedResourceNames() throws IOException {
        Map<String, String> shipped = new TreeMap<>();
        for (String line : resource("/shipped-pci-names.tsv").split("\n")) {
            if (!line.isEmpty() && !line.startsWith("#")) {
                String[] cells = line.split("\t", -1);
                assertThat(cells).as(line).hasSize(2);
                assertThat(shipped.put(cells[0], cells[1])).as("listed twice: " + cells[0]).isNull();
            }
        }
        PciIds bundled = PciIdsDatabase.bundled().names();
        Map<String, String> now = new TreeMap<>();
        deviceIds(bundledText()).keySet().forEach(id -> now.put(id, resourceName(bundled, id)));
        assertThat(now).as("device id → resource name, bundled now vs shipped-pci-names.tsv")
                .containsExactlyEntriesOf(shipped);
    }

    @Test
    void theVersionSaysBothDatabases() {
        assertThat(PciIdsDatabase.bundledVersion()).isEqualTo("2025.07.11 + 2026.08.22");
    }

    private static String resourceName(PciIds names, String id) {
        return ResourceName.forPciDeviceName(names.deviceName(PciIds.NVIDIA, id).orElse(null), id).orElseThrow()
                .name();
    }

    /** Device id → raw name of every device line in the 10de block (the first line of an id wins). */
    private static Map<String, String> deviceIds(String text) {
        Map<String, String> ids = new TreeMap<>();
        Matcher m = DEVICE_LINE.matcher(text.substring(text.indexOf("\n10de ")));
        while (m.find()) {
            ids.putIfAbsent(m.group(1), m.group(2));
        }
        return ids;
    }

    private static String bundledText() throws IOException {
        try (InputStream in = PciIdsDatabase.class.getResourceAsStream(PciIdsDatabase.BUNDLED)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = BundledPciIdsTest.class.getResourceAsStream(name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
