package dev.vgpu.daemon.configure;

import dev.vgpu.configurator.file.InvalidVgpuConfigException;
import dev.vgpu.configurator.file.VgpuConfigFile;
import dev.vgpu.configurator.file.VgpuLayout;
import dev.vgpu.daemon.cli.CliArgs;
import dev.vgpu.daemon.cli.CliOption;
import dev.vgpu.daemon.cli.Refusal;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The vGPU layout options {@code configure} and {@code serve} share: a vgpu-device-manager file, the layout selected
 * in it, and whether the host root is the vGPU-manager simulator's tree (tests and demos). Flags win over their
 * environment variables.
 */
public final class LayoutOptions {

    /** The environment variable behind {@code --vgpu-config}. */
    public static final String FILE_ENV = "VGPU_VGPU_CONFIG";
    /** The environment variable behind {@code --select}. */
    public static final String SELECT_ENV = "VGPU_VGPU_CONFIG_SELECT";

    public static final CliOption VGPU_CONFIG = CliOption.value("--vgpu-config", "FILE", "A vGPU layout file in NVIDIA"
            + " vgpu-device-manager's format (version: v1, vgpu-configs); overrides " + FILE_ENV + ".")
            .withEnv(FILE_ENV);
    public static final CliOption SELECT = CliOption.value("--select", "NAME", "The layout of --vgpu-config to make the"
            + " vendor-VFIO cards hold; overrides " + SELECT_ENV + ".").withEnv(SELECT_ENV);
    public static final CliOption SIMULATED_HOST = CliOption.flag("--simulated-host", "--host-root is a tree the"
            + " vGPU-manager simulator of vgpu-testing keeps (its .vgpu-simulator.v1 file): write through the simulator"
            + " instead of sysfs. For tests and demos only.");
    /** The rows of {@code configure} and {@code serve}. */
    public static final List<CliOption> OPTIONS = List.of(VGPU_CONFIG, SELECT, SIMULATED_HOST);

    private LayoutOptions() {
    }

    /**
     * A layout to apply: the file and the name selected in it, each with where it was given (for messages).
     *
     * @param file       the file
     * @param fileOrigin {@code --vgpu-config} or {@value #FILE_ENV}
     * @param name       the layout's name
     */
    public record Selected(Path file, String fileOrigin, String name) {

        /** Checks. */
        public Selected {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(fileOrigin, "fileOrigin");
            Objects.requireNonNull(name, "name");
        }

        /**
         * Reads the file and selects the layout, now (a {@code SIGHUP} reads the file again).
         *
         * @throws InvalidVgpuConfigException naming the field at fault, or the names the file has
         */
        public VgpuLayout load() throws InvalidVgpuConfigException {
            return VgpuConfigFile.read(file).select(name);
        }

        /** The problem of a file that cannot be used, naming the file: {@code --vgpu-config F: path: problem}. */
        public String problem(InvalidVgpuConfigException e) {
            return fileOrigin + " " + file + ": " + e.getMessage();
        }

        /** For logs: {@code layout "default" of /etc/vgpu/layouts.yaml}. */
        public String describe() {
            return "layout \"" + dev.vgpu.core.internal.Printable.of(name, 120) + "\" of " + file;
        }
    }

    /**
     * The layout asked for; empty when neither the file nor the name is given (blank counts as not given).
     *
     * @throws Refusal when only one of the two is given, or the file's value is not a path
     */
    public static Optional<Selected> resolve(CliArgs args, Map<String, String> env) {
        CliArgs.Given file = args.given(VGPU_CONFIG, env);
        CliArgs.Given name = args.given(SELECT, env);
        boolean hasFile = file != null && !file.value().isBlank();
        boolean hasName = name != null && !name.value().isBlank();
        if (!hasFile && !hasName) {
            return Optional.empty();
        }
        if (!hasFile) {
            throw new Refusal(name.origin() + " names a layout, but no file is given: add --vgpu-config FILE (or "
                    + FILE_ENV + ")");
        }
        if (!hasName) {
            throw new Refusal(file.origin() + " names a layout file, but no layout is selected: add --select NAME (or "
                    + SELECT_ENV + ")");
        }
        try {
            return Optional.of(new Selected(Path.of(file.value().strip()), file.origin(), name.value().strip()));
        } catch (InvalidPathException e) {
            throw new Refusal("invalid " + file.origin() + " value: " + e.getMessage());
        }
    }

    /**
     * The layout now, read and selected; a file or name that cannot be used is a refusal (exit 2) naming it.
     *
     * @throws Refusal naming the file and the field at fault
     */
    public static VgpuLayout loadOrRefuse(Selected selected) {
        try {
            return selected.load();
        } catch (InvalidVgpuConfigException e) {
            throw new Refusal(selected.problem(e));
        }
    }
}
