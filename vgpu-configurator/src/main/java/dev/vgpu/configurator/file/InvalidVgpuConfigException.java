package dev.vgpu.configurator.file;

/**
 * A vGPU configuration file that cannot be used, or a selection that cannot be made from it: the path of the field at
 * fault ({@code vgpu-configs.default[1].device-filter}) and what is wrong with it. {@code configure} exits 2 for it.
 */
public final class InvalidVgpuConfigException extends Exception {

    private static final long serialVersionUID = 1L;

    /** The field path, empty for the file as a whole. */
    private final String path;
    private final String problem;

    /**
     * @param path    the field path, empty for the file as a whole
     * @param problem what is wrong, in words
     */
    public InvalidVgpuConfigException(String path, String problem) {
        super(path.isEmpty() ? problem : path + ": " + problem, null, false, false);
        this.path = path;
        this.problem = problem;
    }

    /** The field at fault ({@code vgpu-configs.default[1].devices}); empty for the file as a whole. */
    public String path() {
        return path;
    }

    /** What is wrong, without the path. */
    public String problem() {
        return problem;
    }
}
