package dev.vgpu.dra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a CDI-enabled container runtime does with the CDI ids the kubelet passes on (docs/DRA.md §6), as far as a
 * test can: loads every {@code *.json} spec of the directory (failing on what CDI refuses: a version below 0.5.0
 * for these names, unknown fields, bad names, a device defined twice), resolves the ids to their edits, and "bind
 * mounts" each mount by copying the host file under a container root.
 *
 * <p>Public, in vgpu-dra's test jar, for the daemon's end-to-end test ({@code DraEndToEndIT}).
 */
public final class CdiRuntime {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> SPEC_FIELDS = Set.of("cdiVersion", "kind", "devices", "containerEdits",
            "annotations");
    private static final Set<String> EDIT_FIELDS = Set.of("env", "deviceNodes", "mounts", "hooks",
            "additionalGIDs", "intelRdt");
    /** CDI's vendor and class rules: each starts with a letter, ends with a letter or digit. */
    private static final Pattern KIND = Pattern.compile(
            "[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?/[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?");
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]*");

    private CdiRuntime() {
    }

    /** A device node as injected: container path, host path, permissions. */
    public record Node(String path, String hostPath, String permissions) {
    }

    /** A mount as injected. */
    public record Mount(String hostPath, String containerPath, List<String> options) {
    }

    /**
     * Everything the ids add to a container.
     *
     * @param env the variables set, in the order first set; a later edit of the same name replaces the value, as a
     *            runtime does when it adds a variable the process already has
     */
    public record Edits(List<Node> nodes, List<Mount> mounts, Map<String, String> env) {
    }

    /** Resolves CDI ids ({@code vendor/class=name}) against the specs in {@code cdiDir}. */
    public static Edits inject(Path cdiDir, List<String> ids) throws IOException {
        Map<String, JsonNode> devices = new LinkedHashMap<>();
        Map<String, JsonNode> specOf = new LinkedHashMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(cdiDir, "*.json")) {
            for (Path file : files) {
                JsonNode spec = JSON.readTree(file.toFile());
                check(spec, file);
                String kind = spec.get("kind").asText();
                for (JsonNode device : spec.get("devices")) {
                    String id = kind + "=" + device.get("name").asText();
                    if (devices.put(id, device) != null) {
                        throw new IOException("CDI device " + id + " is defined twice");
                    }
                    specOf.put(id, spec);
                }
            }
        }
        List<Node> nodes = new ArrayList<>();
        List<Mount> mounts = new ArrayList<>();
        Map<String, String> env = new LinkedHashMap<>();
        for (String id : ids) {
            JsonNode device = devices.get(id);
            if (device == null) {
                throw new IOException("unresolvable CDI device " + id);
            }
            edits(device.get("containerEdits"), nodes, mounts, env);
            edits(specOf.get(id).get("containerEdits"), nodes, mounts, env);
        }
        return new Edits(nodes.stream().distinct().toList(), mounts.stream().distinct().toList(),
                java.util.Collections.unmodifiableMap(env));
    }

    /** Copies each mount's host file to its container path under {@code containerRoot}. */
    public static void mount(Edits edits, Path containerRoot) throws IOException {
        for (Mount mount : edits.mounts()) {
            Path target = containerRoot.resolve(mount.containerPath().substring(1));
            Files.createDirectories(target.getParent());
            Files.copy(Path.of(mount.hostPath()), target);
        }
    }

    private static void check(JsonNode spec, Path file) throws IOException {
        fields(spec, SPEC_FIELDS, file);
        if (!spec.path("cdiVersion").asText().equals("0.5.0")) {
            throw new IOException(file + ": cdiVersion must be 0.5.0 for device names that may start with a digit");
        }
        if (!KIND.matcher(spec.path("kind").asText()).matches()) {
            throw new IOException(file + ": bad kind " + spec.path("kind"));
        }
        if (!spec.path("devices").isArray() || spec.path("devices").isEmpty()) {
            throw new IOException(file + ": no devices");
        }
        for (JsonNode device : spec.get("devices")) {
            fields(device, Set.of("name", "annotations", "containerEdits"), file);
            if (!NAME.matcher(device.path("name").asText()).matches()) {
                throw new IOException(file + ": bad device name " + device.path("name"));
            }
            fields(device.path("containerEdits"), EDIT_FIELDS, file);
        }
        if (spec.has("containerEdits")) {
            fields(spec.get("containerEdits"), EDIT_FIELDS, file);
        }
    }

    private static void fields(JsonNode object, Set<String> known, Path file) throws IOException {
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw new IOException(file + ": unknown field " + name);
            }
        }
    }

    private static void edits(JsonNode edits, List<Node> nodes, List<Mount> mounts, Map<String, String> env)
            throws IOException {
        if (edits == null) {
            return;
        }
        for (JsonNode entry : edits.path("env")) {
            String text = entry.asText();
            int equals = text.indexOf('=');
            if (!entry.isTextual() || equals <= 0) {
                throw new IOException("a CDI env entry is NAME=VALUE, got " + entry);
            }
            env.put(text.substring(0, equals), text.substring(equals + 1));
        }
        for (JsonNode node : edits.path("deviceNodes")) {
            nodes.add(new Node(node.path("path").asText(), node.path("hostPath").asText(),
                    node.path("permissions").asText()));
        }
        for (JsonNode mount : edits.path("mounts")) {
            List<String> options = new ArrayList<>();
            mount.path("options").forEach(o -> options.add(o.asText()));
            mounts.add(new Mount(mount.path("hostPath").asText(), mount.path("containerPath").asText(), options));
        }
    }
}
