package dev.vgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Errors carry the nvml.h name of the return code first, then the entry point and NVML's text. */
class NvmlExceptionTest {

    @ParameterizedTest(name = "{0} = {1}")
    @CsvSource({
        "0, NVML_SUCCESS",
        "1, NVML_ERROR_UNINITIALIZED",
        "3, NVML_ERROR_NOT_SUPPORTED",
        "6, NVML_ERROR_NOT_FOUND",
        "7, NVML_ERROR_INSUFFICIENT_SIZE",
        "9, NVML_ERROR_DRIVER_NOT_LOADED",
        "12, NVML_ERROR_LIBRARY_NOT_FOUND",
        "13, NVML_ERROR_FUNCTION_NOT_FOUND",
        "15, NVML_ERROR_GPU_IS_LOST",
        "30, NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
        "999, NVML_ERROR_UNKNOWN",
        "31, NVML_ERROR_UNRECOGNIZED(31)",
        "-1, NVML_ERROR_UNRECOGNIZED(-1)",
    })
    void returnCodesHaveTheirHeaderNames(int code, String name) {
        NvmlException e = new NvmlException(code, "nvmlDeviceGetSupportedVgpus(0000:81:00.0)", "Not Supported");

        assertThat(e.errorName()).isEqualTo(name);
        assertThat(e.returnCode()).isEqualTo(code);
        assertThat(e.function()).isEqualTo("nvmlDeviceGetSupportedVgpus(0000:81:00.0)");
        assertThat(e.getMessage()).isEqualTo(name + " from nvmlDeviceGetSupportedVgpus(0000:81:00.0): Not Supported");
    }
}
