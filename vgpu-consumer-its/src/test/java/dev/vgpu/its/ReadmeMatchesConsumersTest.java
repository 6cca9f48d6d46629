package dev.vgpu.its;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The README's "Using the library" code is the code the consumer ITs compile and run, character for character. */
class ReadmeMatchesConsumersTest {

    private static final Path IT = Path.of("src/it");

    @ParameterizedTest
    @ValueSource(strings = {
        "classpath-consumer/src/main/java/com/example/lab/LabDemo.java",
        "classpath-consumer/src/main/java/com/example/lab/LabSource.java",
        "classpath-consumer/src/test/java/com/example/lab/LabSourceContractTest.java",
        "modulepath-consumer/src/main/java/module-info.java"})
    void readmeQuotesTheFile(String file) throws IOException {
        String readme = Files.readString(Path.of("../README.md"));
        assertThat(readme).contains("```java\n" + Files.readString(IT.resolve(file)) + "```\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"LabDemo.java", "LabSource.java"})
    void bothConsumersRunTheSameCode(String name) throws IOException {
        Path java = Path.of("src/main/java/com/example/lab", name);
        assertThat(IT.resolve("modulepath-consumer").resolve(java))
                .hasSameTextualContentAs(IT.resolve("classpath-consumer").resolve(java));
    }
}
