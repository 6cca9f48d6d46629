package dev.vgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The probe in a fresh JVM, as scripts/nvml-probe.sh runs it: a clean dynamic linker, real process exit codes. */
class NvmlProbeTest {

    record Run(int exitCode, String output) {
    }

    @Test
    void findsTheDefaultSonameThroughLdLibraryPathAndPrintsWhatNvmlAnswers() throws Exception {
        Run run = probe(NvmlStub.library().getParent().toString());

        assertThat(run.exitCode()).isZero();
        assertThat(run.output()).contains(
                "NVML in use: libnvidia-ml.so.1, 4 GPUs",
                "pci: busId 00000000:C1:00.0 -> 0000:c1:00.0, pciDeviceId 0x26B910DE",
                "1414 : NVIDIA L40S-24Q",
                "supported vGPU types: NVML_ERROR_NOT_SUPPORTED from nvmlDeviceGetSupportedVgpus(0000:81:00.0)",
                "register XID critical error events: NVML_SUCCESS",
                "watcher: watching [0000:41:00.0, 0000:c1:00.0], running true",
                "running after close false",
                "result: done");
    }

    @Test
    void absentLibraryIsReportedAndExitsZero(@TempDir Path dir) throws Exception {
        Run run = probe(null, dir.resolve("libnvidia-ml.so.1").toString());

        assertThat(run.exitCode()).isZero();
        assertThat(run.output()).contains("NVML not in use: NVML_ERROR_LIBRARY_NOT_FOUND", "result: NVML absent");
    }

    private static Run probe(String ldLibraryPath, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), NvmlProbe.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("LD_LIBRARY_PATH");
        if (ldLibraryPath != null) {
            builder.environment().put("LD_LIBRARY_PATH", ldLibraryPath);
        }
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("probe exited; output:%n%s", output).isTrue();
        return new Run(process.exitValue(), output);
    }
}
