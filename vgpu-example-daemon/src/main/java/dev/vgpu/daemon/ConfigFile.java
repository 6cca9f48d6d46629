package dev.vgpu.daemon;

import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.spi.VgpuTypeNameTable;
import dev.vgpu.nvml.XidPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * What the configuration file ({@code --config}, README "Configuration file") says, as the plain values the library
 * takes: rename and exclusion rules, a vGPU type-name table, the XID policy. {@link #NONE} is the daemon without a
 * file. Parsing and every check live in {@link ConfigParser}.
 *
 * @param rules     renames and exclusions, applied by the scanner to every source
 * @param typeNames vGPU type names per PF device id, asked after NVML
 * @param xid       the XID health policy ({@code enabled} read at start only, the rest at every reload)
 */
record ConfigFile(DeviceRules rules, VgpuTypeNameTable typeNames, XidPolicy xid) {

    /** No file: names as the sources give them, nothing excluded, the default XID policy. */
    static final ConfigFile NONE = new ConfigFile(DeviceRules.none(), VgpuTypeNameTable.empty(), XidPolicy.defaults());
    /** Larger files are refused unread: a configuration is a few kilobytes. */
    static final int MAX_BYTES = 1 << 20;

    ConfigFile {
        Objects.requireNonNull(rules, "rules");
        Objects.requireNonNull(typeNames, "typeNames");
        Objects.requireNonNull(xid, "xid");
    }

    /** A file that cannot be used, with the path of the field at fault ({@code resources[1].match.deviceId}). */
    static final class Invalid extends Exception {
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

    /**
     * Reads and checks a file.
     *
     * @throws Invalid when it cannot be read, is not UTF-8 YAML, or says anything this version does not accept
     */
    static ConfigFile read(Path file) throws Invalid {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new Invalid("", "the file does not exist");
        } catch (IOException e) {
            throw new Invalid("", Files.isDirectory(file) ? "it is a directory, not a file"
                    : "the file cannot be read (" + e.getMessage() + ")");
        }
        if (bytes.length > MAX_BYTES) {
            throw new Invalid("", "the file is larger than " + MAX_BYTES + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new Invalid("", "the file is not UTF-8 text");
        }
        return ConfigParser.parse(text);
    }

    /**
     * Checks a configuration given as text (an environment variable), with the file's size limit.
     *
     * @throws Invalid when it is too large, is not YAML, or says anything this version does not accept
     */
    static ConfigFile parse(String text) throws Invalid {
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new Invalid("", "the text is larger than " + MAX_BYTES + " bytes");
        }
        return ConfigParser.parse(text);
    }

    /** One line for the start log: what the file changes. */
    String describe() {
        return rules.renames().size() + " rename rules, " + rules.exclusions().size() + " exclusions, vGPU type names"
                + " for " + typeNames.names().size() + " device ids, " + xid;
    }
}
