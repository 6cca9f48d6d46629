package dev.vgpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import java.io.ByteArrayOutputStream;
import java.io.FilterReader;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The pci.ids lookup as upstream reads the file (docs/HOST-FACTS.md §2.1, trap 16). */
class PciIdsTest {

    static final String SAMPLE = String.join("\n",
            "#",
            "#\tList of PCI ID's",
            "#",
            "# Version: 2025.07.11",
            "",
            "0fff  Some earlier vendor",
            "\t2335  Not an NVIDIA device",
            "10de  NVIDIA Corporation",
            "\t0008  NV1 [EDGE 3D]",
            "\t1eb8  TU104GL [Tesla T4]",
            "\t\t10de 12a2  T4 16GB",
            "# a comment inside the vendor block does not end it",
            "\t20b3  GA100 [A100-SXM-64GB]",
            "\t2236  GA102GL [A10]",
            "\t2331  GH100 [H100 PCIe]",
            "\t2335  GH100 [H200 SXM 141GB]",
            "\t\t10de 18be  H200 SXM 141GB",
            "\t26b9  AD102GL [L40S]",
            "\t2bad  [+]",
            "\t2bae",
            "\t2baf     ",
            "\t1eb8  a later line for the same device loses",
            "10df  Emulex Corporation",
            "\t1ae5  LP6000 Fibre Channel Host Adapter",
            "\t2bb0  after the next vendor line",
            "C 00  Unclassified device",
            "\t00  Non-VGA unclassified device",
            "ffff  looks like a vendor but follows the class section",
            "\t0001  never read",
            "");

    @ParameterizedTest(name = "{0}:{1} -> \"{2}\"")
    @CsvSource(delimiter = '|', nullValues = "NONE", value = {
            "10de | 2335 | GH100 [H200 SXM 141GB]",
            "10DE | 2335 | GH100 [H200 SXM 141GB]",
            "10de | 26B9 | AD102GL [L40S]",
            "10de | 0008 | NV1 [EDGE 3D]",
            "10de | 20b3 | GA100 [A100-SXM-64GB]",
            "10de | 1eb8 | TU104GL [Tesla T4]",          // after a subsystem line and before a comment
            "10de | 2331 | GH100 [H100 PCIe]",           // after the comment inside the block
            "10de | 2bad | [+]",                         // kept as written; ResourceName falls back to the id
            "10de | 2bae | NONE",                        // a device line without a name
            "10de | 2baf | NONE",                        // a name of spaces only
            "10de | 12a2 | NONE",                        // a subsystem id is not a device
            "10de | 18be | NONE",
            "10de | 1ae5 | NONE",                        // another vendor's device
            "10de | 2bb0 | NONE",                        // the block ended at the next vendor line
            "10de | ffff | NONE",
            "10df | 1ae5 | LP6000 Fibre Channel Host Adapter",
            "0fff | 2335 | NONE",                        // vendor not asked for
            "ffff | 0001 | NONE",                        // after the class section
    })
    void looksUpDeviceNamesOfTheVendorsAskedFor(String vendor, String device, String expected) throws IOException {
        PciIds ids = PciIds.parse(new StringReader(SAMPLE), Set.of("10de", "10df", "ffff"));

        assertThat(ids.deviceName(vendor, device).orElse(null)).isEqualTo(expected);
    }

    @Test
    void keepsOnlyTheAskedVendorsNames() throws IOException {
        assertThat(PciIds.parse(new StringReader(SAMPLE), Set.of("10de")).size()).isEqualTo(8);
        assertThat(PciIds.parse(new StringReader(SAMPLE), Set.of("10DF")).size()).isEqualTo(2);
        assertThat(PciIds.parse(new StringReader(SAMPLE), Set.of()).size()).isZero();
        assertThat(PciIds.parse(new StringReader(SAMPLE), Set.of("10de", "10df")).size()).isEqualTo(10);
    }

    @Test
    void aNameMadeOnlyOfRemovedCharactersFallsBackToTheDeviceId() throws IOException {
        PciIds ids = PciIds.parse(new StringReader(SAMPLE), Set.of(PciIds.NVIDIA));

        assertThat(ResourceName.forPciDeviceName(ids.deviceName("10de", "2bad").orElse(null), "2bad"))
                .map(ResourceName::name).contains("2bad");
        assertThat(ResourceName.forPciDeviceName(ids.deviceName("10de", "2335").orElse(null), "2335"))
                .map(ResourceName::name).contains("GH100_H200_SXM_141GB");
    }

    @Test
    void aBlankLineEndsTheVendorBlockAsUpstreamReadsIt() throws IOException {
        String text = "10de  NVIDIA Corporation\n\t2335  first\n\n\t26b9  after a blank line\n";

        PciIds ids = PciIds.parse(new StringReader(text), Set.of("10de"));

        assertThat(ids.deviceName("10de", "2335")).contains("first");
        assertThat(ids.deviceName("10de", "26b9")).isEmpty();
    }

    @Test
    void aLineOverTheCapIsSkippedAndTheLinesAroundItStillCount() throws IOException {
        String text = "10de  NVIDIA Corporation\r\n\t2335  before\r\n\t2336  " + "x".repeat(PciIds.MAX_LINE * 3)
                + "\n\t26b9  after\r\t2331  " + "y".repeat(PciIds.MAX_LINE - 7) + "\n\t20b5  last";

        PciIds ids = PciIds.parse(new StringReader(text), Set.of("10de"));

        assertThat(ids.deviceName("10de", "2335")).contains("before");
        assertThat(ids.deviceName("10de", "2336")).as("over the cap").isEmpty();
        assertThat(ids.deviceName("10de", "26b9")).contains("after");
        assertThat(ids.deviceName("10de", "2331")).as("exactly at the cap").contains("y".repeat(PciIds.MAX_LINE - 7));
        assertThat(ids.deviceName("10de", "20b5")).as("a last line without a newline").contains("last");
    }

    @Test
    void linesAreTheSameWhereverTheReadsCutThemAndWhateverEndsThem() throws IOException {
        // Device lines of every length around the reader's 8,192-character buffer, ended by \n, \r\n or \r in
        // turn, one over the cap; read whole, then through a reader that hands out 1 to 13 characters at a time
        // (a \r\n then falls across a refill too).
        StringBuilder text = new StringBuilder("10de  NVIDIA Corporation\n");
        java.util.Map<String, String> expected = new java.util.HashMap<>();
        String[] ends = {"\n", "\r\n", "\r"};
        int lengths = 0;
        for (int i = 0; i < 700; i++) {
            String device = String.format(Locale.ROOT, "%04x", 0x1000 + i);
            int nameLength = i == 350 ? PciIds.MAX_LINE : 1 + (i * 37) % 60;
            String name = ("n" + i + "-" + "z".repeat(nameLength)).substring(0, nameLength);
            text.append('\t').append(device).append("  ").append(name).append(ends[i % 3]);
            if (i != 350) {
                expected.put(device, name);
            }
            lengths += nameLength;
        }
        assertThat(lengths).as("the text spans several buffers").isGreaterThan(3 * 8192);

        PciIds whole = PciIds.parse(new StringReader(text.toString()), Set.of("10de"));
        PciIds cut = PciIds.parse(new FilterReader(new StringReader(text.toString())) {
            private int next;

            @Override
            public int read(char[] into, int offset, int length) throws IOException {
                next = next % 13 + 1;
                return super.read(into, offset, Math.min(length, next));
            }
        }, Set.of("10de"));

        for (PciIds ids : List.of(whole, cut)) {
            assertThat(ids.size()).isEqualTo(expected.size());
            expected.forEach((device, name) -> assertThat(ids.deviceName("10de", device)).as(device).contains(name));
            assertThat(ids.deviceName("10de", "115e")).as("the line over the cap").isEmpty();
        }
    }

    @Test
    void onlyTheFirstBlockOfAVendorCounts() throws IOException {
        String text = "10de  NVIDIA\n\t2335  first\n10df  Other\n10de  NVIDIA again\n\t26b9  second block\n";

        PciIds ids = PciIds.parse(new StringReader(text), Set.of("10de", "ffff"));

        assertThat(ids.deviceName("10de", "2335")).contains("first");
        assertThat(ids.deviceName("10de", "26b9")).isEmpty();
    }

    @Test
    void aMissingFileIsAnEmptyLookup(@TempDir Path dir) {
        PciIds ids = PciIds.load(dir.resolve("pci.ids"), Set.of(PciIds.NVIDIA));

        assertThat(ids.size()).isZero();
        assertThat(ids.deviceName("10de", "2335")).isEmpty();
        assertThat(ids.origin()).isEmpty();
    }

    @Test
    void aDirectoryInsteadOfAFileIsAnEmptyLookup(@TempDir Path dir) {
        assertThat(PciIds.load(dir, Set.of(PciIds.NVIDIA)).size()).isZero();
    }

    @Test
    void loadsFromJimfs() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path file = fs.getPath("/usr/share/misc/pci.ids");
            Files.createDirectories(file.getParent());
            Files.writeString(file, SAMPLE);

            PciIds ids = PciIds.load(file, Set.of(PciIds.NVIDIA));

            assertThat(ids.deviceName("10de", "2335")).contains("GH100 [H200 SXM 141GB]");
            assertThat(ids.origin()).contains(file);
            assertThat(PciIds.load(fs.getPath("/usr/pci.ids"), Set.of(PciIds.NVIDIA)).size()).isZero();
        }
    }

    @Test
    void loadFirstTakesTheFirstReadableCandidate(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("usr/share/misc/pci.ids");
        Path directory = Files.createDirectories(dir.resolve("usr/share/hwdata/pci.ids"));
        Path present = dir.resolve("usr/pci.ids");
        Files.writeString(present, SAMPLE);

        PciIds ids = PciIds.loadFirst(List.of(missing, directory, present), Set.of(PciIds.NVIDIA));

        assertThat(ids.origin()).contains(present);
        assertThat(ids.size()).isEqualTo(8);
        assertThat(PciIds.loadFirst(List.of(missing, directory), Set.of(PciIds.NVIDIA)).size()).isZero();
    }

    @Test
    void readsUtf8AndToleratesMalformedBytes(@TempDir Path dir) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes("10de  NVIDIA\n\t2335  Gëforce™ [H200]\n\t2336  bad ".getBytes(StandardCharsets.UTF_8));
        bytes.write(0xff);
        bytes.write(0xc3);
        bytes.writeBytes(" byte\n\t26b9  after it\n".getBytes(StandardCharsets.UTF_8));
        Path file = dir.resolve("pci.ids");
        Files.write(file, bytes.toByteArray());

        PciIds ids = PciIds.load(file, Set.of(PciIds.NVIDIA));

        assertThat(ids.deviceName("10de", "2335")).contains("Gëforce™ [H200]");
        assertThat(ids.deviceName("10de", "2336")).hasValueSatisfying(n -> assertThat(n).startsWith("bad \ufffd"));
        assertThat(ids.deviceName("10de", "26b9")).contains("after it");
    }

    @Test
    void aDatabaseOfOnePointFiveMegabytesKeepsOnlyTheAskedVendor(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("pci.ids");
        Files.writeString(file, generatedDatabase());
        assertThat(Files.size(file)).isBetween(1_400_000L, 2_000_000L);

        PciIds nvidia = PciIds.load(file, Set.of(PciIds.NVIDIA));
        PciIds two = PciIds.load(file, Set.of(PciIds.NVIDIA, "13e0"));

        assertThat(nvidia.size()).isEqualTo(DEVICES_PER_VENDOR);
        assertThat(nvidia.deviceName("10de", "2335")).contains("GH100 [H200 SXM 141GB]");
        assertThat(nvidia.deviceName("10de", "0003")).contains("Device 10de:0003 [Model 3]");
        assertThat(nvidia.deviceName("10df", "0003")).isEmpty();
        assertThat(two.size()).isEqualTo(2 * DEVICES_PER_VENDOR);
        assertThat(two.deviceName("13e0", "0007")).contains("Device 13e0:0007 [Model 7]");
    }

    @Test
    void readingStopsAfterTheLastVendorAskedFor() throws IOException {
        String database = generatedDatabase();
        CountingReader reader = new CountingReader(new StringReader(database));

        PciIds ids = PciIds.parse(reader, Set.of(PciIds.NVIDIA));

        assertThat(ids.size()).isEqualTo(DEVICES_PER_VENDOR);
        // 10de is vendor 222 of 1000: well under half of the text needs reading
        assertThat(reader.read).isLessThan(database.length() / 2);
    }

    static final int VENDORS = 1000;
    static final int DEVICES_PER_VENDOR = 12;

    /** About 1.6 MB in pci.ids layout: 1000 vendors 1000..13e7, 12 devices each with two subsystems, comments. */
    static String generatedDatabase() {
        StringBuilder out = new StringBuilder(1_800_000);
        out.append("#\n#\tList of PCI ID's (generated for tests)\n#\n\n");
        for (int v = 0; v < VENDORS; v++) {
            String vendor = String.format(Locale.ROOT, "%04x", 0x1000 + v);
            out.append(vendor).append("  Vendor ").append(vendor).append(" Corporation\n");
            for (int d = 0; d < DEVICES_PER_VENDOR; d++) {
                String device = vendor.equals("10de") && d == 0 ? "2335" : String.format(Locale.ROOT, "%04x", d);
                String name = device.equals("2335") ? "GH100 [H200 SXM 141GB]"
                        : "Device " + vendor + ":" + device + " [Model " + d + "]";
                out.append('\t').append(device).append("  ").append(name).append('\n');
                out.append("\t\t").append(vendor).append(' ').append(String.format(Locale.ROOT, "%04x", d + 1))
                        .append("  Subsystem one of ").append(name).append('\n');
                out.append("\t\t1028 ").append(String.format(Locale.ROOT, "%04x", d + 2))
                        .append("  Subsystem two of ").append(name).append('\n');
            }
            if (v % 10 == 0) {
                out.append("# comment after vendor ").append(vendor).append('\n');
            }
        }
        out.append("\n# List of known device classes\nC 00  Unclassified device\n\t00  Non-VGA unclassified\n");
        return out.toString();
    }

    /** Counts the characters a parser pulls. */
    static final class CountingReader extends FilterReader {
        long read;

        CountingReader(Reader in) {
            super(in);
        }

        @Override
        public int read(char[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                read += n;
            }
            return n;
        }

        @Override
        public int read() throws IOException {
            int c = super.read();
            if (c >= 0) {
                read++;
            }
            return c;
        }
    }
}
