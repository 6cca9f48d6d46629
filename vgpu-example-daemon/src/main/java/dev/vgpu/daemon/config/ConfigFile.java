package dev.vgpu.daemon.config;

import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.spi.VgpuTypeNameTable;
import dev.vgpu.nvml.XidPolicy;
import java.util.Objects;

/**
 * What the configuration file ({@code --config}, README "Configuration file") says, as the plain values the library
 * takes: rename and exclusion rules, a vGPU type-name table, the XID policy. {@link #NONE} is the daemon without a
 * file. Reading, parsing and every check live in {@code ConfigParser}, which makes these.
 *
 * @param rules     renames and exclusions, applied by the scanner to every source
 * @param typeNames vGPU type names per PF device id, asked after NVML
 * @param xid       the XID health policy ({@code enabled} read at start only, the rest at every reload)
 */
public record ConfigFile(DeviceRules rules, VgpuTypeNameTable typeNames, XidPolicy xid) {

    /** No file: names as the sources give them, nothing excluded, the default XID policy. */
    public static final ConfigFile NONE = new ConfigFile(DeviceRules.none(), VgpuTypeNameTable.empty(), XidPolicy.defaults());

    public ConfigFile {
        Objects.requireNonNull(rules, "rules");
        Objects.requireNonNull(typeNames, "typeNames");
        Objects.requireNonNull(xid, "xid");
    }

    /** A file that cannot be used, with the path of the field at fault ({@code resources[1].match.deviceId}). */
    public static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        /** @param path the field path, empty for the file as a whole */
        Invalid(String path, String problem) {
            super(path.isEmpty() ? problem : path + ": " + problem);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** One line for the start log: what the file changes. */
    String describe() {
        return rules.renames().size() + " rename rules, " + rules.exclusions().size() + " exclusions, vGPU type names"
                + " for " + typeNames.names().size() + " device ids, " + xid;
    }
}
