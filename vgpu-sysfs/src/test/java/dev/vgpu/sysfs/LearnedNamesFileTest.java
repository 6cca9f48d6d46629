package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The state file of learned profile names: its format, its limits and how it is read and written. */
class LearnedNamesFileTest {

    static final TypeNameMemory.Card H200 = new TypeNameMemory.Card(PciAddress.parse("0000:1b:00.0"), "2335",
            "550.54.14");
    static final TypeNameMemory.Card L40S = new TypeNameMemory.Card(PciAddress.parse("0000:3b:00.0"), "26b9",
            TypeNameMemory.Card.UNKNOWN_DRIVER);
    static final Map<TypeNameMemory.Card, Map<Long, String>> NAMES = Map.of(
            H200, Map.of(1414L, "NVIDIA H200X-1-18C", 1428L, "NVIDIA H200X-141C"),
            L40S, Map.of(1152L, "NVIDIA L40S-1Q"));

    @TempDir
    Path tmp;

    Path file() {
        return tmp.resolve(LearnedNamesFile.FILE);
    }

    void writeRaw(String text) throws IOException {
        Files.writeString(file(), text, StandardCharsets.UTF_8);
    }

    @Test
    void whatIsWrittenIsReadBackAndTheTextIsSortedAndVersioned() throws IOException {
        LearnedNamesFile.write(tmp, NAMES);

        assertThat(LearnedNamesFile.read(tmp)).isEqualTo(new LearnedNamesFile.Contents(NAMES, Optional.empty()));
        assertThat(Files.readString(file())).isEqualTo("vgpu-vendor-vfio-names v1\n"
                + "0000:1b:00.0\t2335\t550.54.14\t1414\tNVIDIA H200X-1-18C\n"
                + "0000:1b:00.0\t2335\t550.54.14\t1428\tNVIDIA H200X-141C\n"
                + "0000:3b:00.0\t26b9\tunknown\t1152\tNVIDIA L40S-1Q\n");
    }

    @Test
    void aMissingFileOrDirectoryHasNoNamesAndNoProblem() {
        assertThat(LearnedNamesFile.read(tmp)).isEqualTo(new LearnedNamesFile.Contents(Map.of(), Optional.empty()));
        assertThat(LearnedNamesFile.read(tmp.resolve("missing")).problem()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "''                                                                  | it is empty",
        "'{\"names\":[]}\n'                                                  | its first line is not",
        "'vgpu-vendor-vfio-names v2\n'                                       | another version's",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t550\t1414\tX'       | cut off",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t550\t1414\n'        | line 2 is not",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0 2335 550 1414 X\n'         | 1 tab-separated fields",
        "'vgpu-vendor-vfio-names v1\nnot-a-bdf\t2335\t550\t1414\tX\n'        | is not a PCI address",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335x\t550\t1414\tX\n'    | is not four lowercase hex digits",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t5 5\t1414\tX\n'     | is not a driver version",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t550\t-1\tX\n'       | is not a type id",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t550\t1414\t\n'      | is not a profile name",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t550\t1414\tA\u0007\n' | is not a profile name",
        "'vgpu-vendor-vfio-names v1\n0000:1b:00.0\t2335\t550\t1\tA\n0000:1b:00.0\t2335\t550\t1\tB\n' | a second time",
    })
    void aCorruptOrForeignFileIsUnusableWithAReasonAndNoNames(String text, String reason) throws IOException {
        writeRaw(text);

        LearnedNamesFile.Contents contents = LearnedNamesFile.read(tmp);

        assertThat(contents.names()).isEmpty();
        assertThat(contents.problem()).hasValueSatisfying(problem -> assertThat(problem).contains(reason));
    }

    @Test
    void bytesThatAreNotUtf8AreUnusable() throws IOException {
        Files.write(file(), new byte[] {'v', (byte) 0xff, '\n'});
        assertThat(LearnedNamesFile.read(tmp).problem()).contains("it is not UTF-8 text");
    }

    @Test
    void aFileLargerThanTheCapIsRefusedWithoutBeingRead() throws IOException {
        try (var out = Files.newByteChannel(file(), java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            out.position(1L << 30).write(java.nio.ByteBuffer.wrap(new byte[] {'\n'}));
        }

        assertThat(LearnedNamesFile.read(tmp).problem()).hasValueSatisfying(p -> assertThat(p)
                .contains("1073741825 bytes", "more than the 1048576"));
    }

    @Test
    void moreNamesThanTheCapAreUnusable() throws IOException {
        StringBuilder text = new StringBuilder(LearnedNamesFile.HEADER + "\n");
        for (int i = 0; i <= LearnedNamesFile.MAX_ENTRIES; i++) {
            text.append("0000:1b:00.0\t2335\t550\t").append(i).append("\tNVIDIA X-").append(i).append('\n');
        }
        writeRaw(text.toString());

        assertThat(LearnedNamesFile.read(tmp).problem()).contains("it has more than 4096 names");
    }

    @Test
    void aSymbolicLinkAtTheFilesPathIsNeverFollowedAndAWriteReplacesTheLinkItself() throws IOException {
        Path target = tmp.resolve("elsewhere");
        LearnedNamesFile.write(tmp, NAMES);
        Files.move(file(), target);
        Files.createSymbolicLink(file(), target);
        String targetText = Files.readString(target);

        assertThat(LearnedNamesFile.read(tmp).problem()).contains("it is a symbolic link, which is never followed");

        LearnedNamesFile.write(tmp, Map.of(L40S, Map.of(1155L, "NVIDIA L40S-4Q")));
        assertThat(Files.isSymbolicLink(file())).isFalse();
        assertThat(Files.readString(target)).as("the link's target is untouched").isEqualTo(targetText);
        assertThat(LearnedNamesFile.read(tmp).names()).isEqualTo(Map.of(L40S, Map.of(1155L, "NVIDIA L40S-4Q")));
    }

    @Test
    void aDirectoryAtTheFilesPathIsUnusableAndAWriteFailsLeavingNoTemporaryFile() throws IOException {
        Files.createDirectories(file().resolve("inside"));

        assertThat(LearnedNamesFile.read(tmp).problem()).contains("it is not a regular file");
        assertThatThrownBy(() -> LearnedNamesFile.write(tmp, NAMES)).isInstanceOf(IOException.class);
        try (Stream<Path> files = Files.list(tmp)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(LearnedNamesFile.FILE);
        }
    }

    @Test
    void aWriteCreatesTheDirectoryForItsOwnerOnlyAndLeavesOnlyTheFileThere() throws IOException {
        Path dir = tmp.resolve("var/lib/vgpu");
        LearnedNamesFile.write(dir, NAMES);
        LearnedNamesFile.write(dir, Map.of(H200, Map.of(1414L, "NVIDIA H200X-1-18C")));

        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(LearnedNamesFile.FILE);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(LearnedNamesFile.FILE),
                LinkOption.NOFOLLOW_LINKS))).isEqualTo("rw-------");
        assertThat(LearnedNamesFile.read(dir).names()).isEqualTo(Map.of(H200, Map.of(1414L, "NVIDIA H200X-1-18C")));
    }

    @Test
    void profileNamesThatCannotBeStoredAreRefusedBeforeAnythingIsWritten() {
        assertThat(LearnedNamesFile.storable("NVIDIA L40S-1Q")).isTrue();
        assertThat(LearnedNamesFile.storable("GRID A100X-1-5C ÄÖ")).isTrue();
        for (String bad : new String[] {"", "tab\there", "line\nend", "cr\rhere", " padded", "x".repeat(257),
            "nel\u0085", "sep\u2028"}) {
            assertThat(LearnedNamesFile.storable(bad)).as(bad).isFalse();
        }
        Map<TypeNameMemory.Card, Map<Long, String>> bad = new HashMap<>();
        bad.put(H200, Map.of(1L, "two\tfields"));
        assertThatThrownBy(() -> LearnedNamesFile.write(tmp, bad)).isInstanceOf(IllegalArgumentException.class);
        assertThat(file()).doesNotExist();
    }
}
