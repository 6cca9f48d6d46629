package dev.vgpu.nvml;

/**
 * An NVML call that did not succeed, with the {@code nvmlReturn_t} code, its {@code nvml.h} name and the
 * entry point that answered it. The message starts with the name, for example
 * {@code NVML_ERROR_NOT_SUPPORTED from nvmlDeviceGetSupportedVgpus(0000:81:00.0): Not Supported}.
 *
 * <p>A library that could not be loaded reads as {@code NVML_ERROR_LIBRARY_NOT_FOUND}, an entry point the
 * loaded library lacks (an old driver) as {@code NVML_ERROR_FUNCTION_NOT_FOUND}, as go-nvml reports them.
 */
final class NvmlException extends Exception {

    private final int returnCode;
    private final String function;

    NvmlException(int returnCode, String function, String detail) {
        super(NvmlReturn.name(returnCode) + " from " + function + ": " + detail);
        this.returnCode = returnCode;
        this.function = function;
    }

    /** The {@code nvmlReturn_t} value, e.g. 3. */
    public int returnCode() {
        return returnCode;
    }

    /** The {@code nvml.h} name of the return code, e.g. {@code NVML_ERROR_NOT_SUPPORTED}. */
    public String errorName() {
        return NvmlReturn.name(returnCode);
    }

    /** The NVML entry point (or loading step) that failed, with its argument, e.g. {@code nvmlInit_v2()}. */
    public String function() {
        return function;
    }
}
