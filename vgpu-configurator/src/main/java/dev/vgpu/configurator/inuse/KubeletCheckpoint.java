package dev.vgpu.configurator.inuse;

import dev.vgpu.configurator.InUse;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.internal.Printable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The kubelet's record of the devices it allocated to containers: {@code kubelet_internal_checkpoint} in its
 * device-plugin directory. A device id there is allocated to a pod until the kubelet forgets the pod, so a VF whose
 * address is there is in use: the configurator never writes it. JSON, written whole by the kubelet (temp file and
 * rename):
 * <pre>
 * {"Data": {"PodDeviceEntries": [{"PodUID": "…", "ContainerName": "…", "ResourceName": "nvidia.com/…",
 *                                 "DeviceIDs": {"0": ["0000:41:00.4"]}, "AllocResp": "…"}],
 *           "RegisteredDevices": {"nvidia.com/…": ["0000:41:00.4", …]}},
 *  "Checksum": 123}
 * </pre>
 * {@code DeviceIDs} maps a NUMA node to ids since Kubernetes 1.20 and was a plain list before; both are read. Only
 * {@code PodDeviceEntries} count ({@code RegisteredDevices} lists what was advertised, allocated or not); ids of every
 * resource count, and those that are not PCI addresses (mdev UUIDs, other plugins' ids) are left out. The checksum is
 * not checked (it hashes Go's in-memory form); a file the kubelet itself would refuse still names what it allocated.
 *
 * <p>A missing file is nothing in use (no kubelet has allocated anything on this node yet). A file that cannot be read
 * or is not such a document (a symbolic link, not a regular file, more than {@value #MAX_BYTES} bytes, not UTF-8, not
 * this shape) is an {@link IOException} naming the file and the problem: which VFs are in use then cannot be told,
 * and the applier writes nothing. Stateless.
 */
public final class KubeletCheckpoint {

    /** The file's name in the device-plugin directory. */
    public static final String FILE = "kubelet_internal_checkpoint";
    /** The largest file read: an entry per container takes well under a KiB, so many thousands fit. */
    public static final int MAX_BYTES = 16 << 20;

    private KubeletCheckpoint() {
    }

    /** The VFs in use as {@code <deviceDir>/kubelet_internal_checkpoint} says, read again at every call. */
    public static InUse in(Path deviceDir) {
        Path file = deviceDir.resolve(FILE);
        return () -> read(file);
    }

    /**
     * The PCI addresses the file names as allocated; empty when there is no file.
     *
     * @throws IOException naming the file when it cannot be read or is not a kubelet device checkpoint
     */
    public static Set<PciAddress> read(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        String text;
        try {
            text = text(file);
        } catch (NoSuchFileException e) {
            return Set.of();
        }
        return allocated(file, text);
    }

    /** The addresses a checkpoint's text names as allocated; {@code file} only names it in messages. */
    static Set<PciAddress> allocated(Path file, String text) throws IOException {
        Object document;
        try {
            document = new Load(LoadSettings.builder().setSchema(new CoreSchema()).setAllowDuplicateKeys(false)
                    .setMaxAliasesForCollections(10).setCodePointLimit(MAX_BYTES + 1).setLabel(FILE).build())
                    .loadFromString(text);
        } catch (YamlEngineException e) {
            throw unusable(file, "it is not JSON (" + Printable.of(firstLine(e.getMessage()), 200) + ")");
        } catch (StackOverflowError e) {
            throw unusable(file, "it is nested too deeply");
        }
        if (!(document instanceof Map<?, ?> top) || !(top.get("Data") instanceof Map<?, ?> data)) {
            throw unusable(file, "it has no \"Data\" object");
        }
        Object entries = data.get("PodDeviceEntries");
        Set<PciAddress> inUse = new TreeSet<>();
        if (entries == null) {
            return inUse;
        }
        if (!(entries instanceof List<?> list)) {
            throw unusable(file, "\"Data.PodDeviceEntries\" is not a list");
        }
        for (int i = 0; i < list.size(); i++) {
            String path = "Data.PodDeviceEntries[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> entry)) {
                throw unusable(file, "\"" + path + "\" is not an object");
            }
            Object ids = entry.get("DeviceIDs");
            if (ids instanceof Map<?, ?> perNuma) {
                for (Map.Entry<?, ?> node : perNuma.entrySet()) {
                    addIds(file, path + ".DeviceIDs." + node.getKey(), node.getValue(), inUse);
                }
            } else if (ids != null) {
                addIds(file, path + ".DeviceIDs", ids, inUse);
            }
        }
        return inUse;
    }

    private static void addIds(Path file, String path, Object ids, Set<PciAddress> inUse) throws IOException {
        if (ids == null) {
            return;
        }
        if (!(ids instanceof List<?> list)) {
            throw unusable(file, "\"" + Printable.of(path, 120) + "\" is not a list of device ids");
        }
        for (Object id : list) {
            if (!(id instanceof String text)) {
                throw unusable(file, "\"" + Printable.of(path, 120) + "\" holds a device id that is not text");
            }
            if (PciAddress.isValid(text)) {
                inUse.add(PciAddress.parse(text));
            }
        }
    }

    /** A regular file, not through a link, at most {@value #MAX_BYTES} bytes of UTF-8. */
    private static String text(Path file) throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS);
        if (attributes.isSymbolicLink()) {
            throw unusable(file, "it is a symbolic link, which is never followed");
        }
        if (!attributes.isRegularFile()) {
            throw unusable(file, "it is not a regular file (a FIFO, socket, device or directory)");
        }
        if (attributes.size() > MAX_BYTES) {
            throw unusable(file, "it has " + attributes.size() + " bytes, more than the " + MAX_BYTES + " read");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw unusable(file, "it grew past " + MAX_BYTES + " bytes while it was read");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw unusable(file, "it is not UTF-8 text");
        }
    }

    private static IOException unusable(Path file, String problem) {
        return new IOException("the kubelet's device checkpoint " + file + " cannot be used: " + problem
                + "; which VFs are in use cannot be told from it");
    }

    private static String firstLine(String message) {
        return message == null ? "unknown problem" : message.lines().findFirst().orElse("");
    }
}
