package dev.vgpu.configurator.file;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A vGPU layout file in NVIDIA vgpu-device-manager's format ({@code version: v1}), so that a file written for it works
 * unchanged: named layouts, each a list of entries saying which cards hold which profiles.
 * <pre>
 * version: v1
 * vgpu-configs:
 *   default:
 *     - devices: all
 *       vgpu-devices: {"L40S-12Q": 4}
 *   mixed-node:
 *     - devices: [0]
 *       device-filter: ["0x26B910DE"]
 *       vgpu-devices: {"NVIDIA L40S-24Q": 2}
 * </pre>
 * Parsing is pure and strict ({@link VgpuConfigParser}): an unknown field or version is an error naming its path.
 * Profiles are checked against each card when a layout is planned (an unknown one is refused naming the card and the
 * profile). {@link #select} picks a layout; {@link VgpuLayout#demands} turns it into each card's demand.
 *
 * @param configs layout name → its entries, in file order; sorted by name
 */
public record VgpuConfigFile(Map<String, List<VgpuConfigSpec>> configs) {

    /** The one version read. */
    public static final String VERSION = "v1";
    /** Larger files are refused unread: a layout file is a few kilobytes. */
    public static final int MAX_BYTES = 1 << 20;

    /** Checks and copies. */
    public VgpuConfigFile {
        Map<String, List<VgpuConfigSpec>> sorted = new TreeMap<>();
        configs.forEach((name, specs) -> {
            Objects.requireNonNull(name, "name");
            sorted.put(name, List.copyOf(specs));
        });
        configs = Collections.unmodifiableMap(sorted);
    }

    /**
     * Parses a file's text.
     *
     * @throws InvalidVgpuConfigException when it is larger than {@value #MAX_BYTES} bytes, not YAML, or says anything
     *                                    this version does not accept
     */
    public static VgpuConfigFile parse(String text) throws InvalidVgpuConfigException {
        if (text.length() > MAX_BYTES || text.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new InvalidVgpuConfigException("", "the text is larger than " + MAX_BYTES + " bytes");
        }
        return VgpuConfigParser.parse(text);
    }

    /**
     * Reads and parses a file: at most {@value #MAX_BYTES} bytes of UTF-8.
     *
     * @throws InvalidVgpuConfigException when it cannot be read or parsed; the message names the file's problem
     */
    public static VgpuConfigFile read(Path file) throws InvalidVgpuConfigException {
        byte[] bytes;
        if (Files.isDirectory(file)) {
            throw new InvalidVgpuConfigException("", "it is a directory, not a file");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new InvalidVgpuConfigException("", "it is not a regular file (a FIFO, socket or device)");
        }
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new InvalidVgpuConfigException("", "the file does not exist");
        } catch (IOException e) {
            throw new InvalidVgpuConfigException("", "the file cannot be read (" + e.getMessage() + ")");
        }
        if (bytes.length > MAX_BYTES) {
            throw new InvalidVgpuConfigException("", "the file is larger than " + MAX_BYTES + " bytes");
        }
        try {
            return VgpuConfigParser.parse(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString());
        } catch (CharacterCodingException e) {
            throw new InvalidVgpuConfigException("", "the file is not UTF-8 text");
        }
    }

    /**
     * The layout called {@code name}.
     *
     * @throws InvalidVgpuConfigException when the file has none of that name; the message lists the names it has
     */
    public VgpuLayout select(String name) throws InvalidVgpuConfigException {
        Objects.requireNonNull(name, "name");
        List<VgpuConfigSpec> specs = configs.get(name);
        if (specs == null) {
            throw new InvalidVgpuConfigException("vgpu-configs", "no layout is called " + VgpuConfigParser.show(name)
                    + " (the file has " + VgpuConfigParser.listed(new ArrayList<>(configs.keySet())) + ")");
        }
        return new VgpuLayout(name, specs);
    }
}
