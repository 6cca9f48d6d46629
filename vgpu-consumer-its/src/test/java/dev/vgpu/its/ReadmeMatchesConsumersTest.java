package dev.vgpu.its;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The README's "Using the library" is what the consumer ITs build and run, character for character: the pom (with
 * this build's versions where the ITs have placeholders), the module descriptor and every Java file.
 */
class ReadmeMatchesConsumersTest {

    private static final Path IT = Path.of("src/it");

    private static String readme() throws IOException {
        return Files.readString(Path.of("../README.md"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "classpath-consumer/src/test/java/com/example/lab/LabDemoTest.java",
        "classpath-consumer/src/main/java/com/example/lab/LabSource.java",
        "classpath-consumer/src/test/java/com/example/lab/LabSourceContractTest.java",
        "modulepath-consumer/src/main/java/module-info.java"})
    void readmeQuotesTheFile(String file) throws IOException {
        assertThat(readme()).contains("```java\n" + Files.readString(IT.resolve(file)) + "```\n");
    }

    @Test
    void readmeQuotesTheModulePathConsumersPomWithThisBuildsVersions() throws IOException {
        String pom = Files.readString(IT.resolve("modulepath-consumer/pom.xml"))
                .replace("@project.version@", System.getProperty("its.project.version"))
                .replace("@slf4j.version@", System.getProperty("its.slf4j.version"))
                .replace("@junit.version@", System.getProperty("its.junit.version"));
        assertThat(pom).doesNotContain("@");
        assertThat(readme()).contains("```xml\n" + pom + "```\n");
    }

    @Test
    void bothConsumerPomsDifferOnlyInTheirArtifactIdAndComment() throws IOException {
        assertThat(withoutNameAndComment("modulepath-consumer"))
                .isEqualTo(withoutNameAndComment("classpath-consumer"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"main/java/com/example/lab/LabSource.java", "test/java/com/example/lab/LabDemoTest.java",
        "test/java/com/example/lab/LabSourceContractTest.java"})
    void bothConsumersRunTheSameCode(String name) {
        Path java = Path.of("src").resolve(name);
        assertThat(IT.resolve("modulepath-consumer").resolve(java))
                .hasSameTextualContentAs(IT.resolve("classpath-consumer").resolve(java));
    }

    private static List<String> withoutNameAndComment(String consumer) throws IOException {
        return Files.readAllLines(IT.resolve(consumer).resolve("pom.xml")).stream()
                .filter(line -> !line.startsWith("  <artifactId>lab-") && !line.startsWith("  <!-- A library user"))
                .collect(Collectors.toList());
    }
}
