package dev.vgpu.bench.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The launch command of the DaemonSet, read from its manifest rather than copied: the container's {@code args} and
 * the JVM flags, and the other environment variables with a one-line value. The flags are the image's
 * ({@code deploy/image/jvm.flags} beside the manifest's {@code deploy/}, plus the launcher's class-data archive)
 * followed by the manifest's {@code JAVA_TOOL_OPTIONS}, which override them; an older manifest that wrote every flag
 * into {@code JAVA_TOOL_OPTIONS} is read as it is. A small line reader for the one layout deploy/base uses, not YAML.
 *
 * @param javaToolOptions the JVM flags, one token each
 * @param args            the daemon's arguments, e.g. {@code serve --host-root=/host ...}
 * @param env             the container's other environment variables with a one-line value (e.g. MALLOC_ARENA_MAX)
 */
record Manifest(List<String> javaToolOptions, List<String> args, Map<String, String> env) {

    /** The class-data archive the image's launcher names (deploy/image/vgpu-daemon). */
    private static final String IMAGE_ARCHIVE = "-XX:SharedArchiveFile=/opt/vgpu/vgpu-daemon.jsa";
    /** The flags that name the daemon's class-data archive or AOT cache, an image path. */
    private static final List<String> ARCHIVE_FLAGS = List.of("-XX:SharedArchiveFile=", "-XX:AOTCache=");

    static Manifest read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<String> flags = new ArrayList<>();
        List<String> args = new ArrayList<>();
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String entry = line.strip();
            if (entry.startsWith("- name: ") && !entry.equals("- name: JAVA_TOOL_OPTIONS") && i + 1 < lines.size()
                    && lines.get(i + 1).strip().startsWith("value: ")) {
                String value = lines.get(i + 1).strip().substring("value: ".length()).strip();
                if (!value.startsWith(">") && !value.startsWith("|")) {
                    env.put(entry.substring("- name: ".length()).strip(), value.replace("\"", ""));
                }
            }
            if (line.strip().equals("args:") && args.isEmpty()) {
                for (int j = i + 1; j < lines.size(); j++) {
                    String item = lines.get(j).strip();
                    if (item.startsWith("#")) {
                        continue;
                    }
                    if (!item.startsWith("- ")) {
                        break;
                    }
                    args.add(item.substring(2).strip());
                }
            }
            if (line.strip().equals("- name: JAVA_TOOL_OPTIONS") && flags.isEmpty()) {
                int j = i + 1;
                while (lines.get(j).strip().startsWith("#")) {
                    j++;
                }
                String value = lines.get(j);
                int indent = indent(value);
                String inline = value.strip().substring("value:".length()).strip();
                if (!inline.equals(">-") && !inline.equals(">")) {
                    flags.addAll(tokens(inline.replace("\"", "")));
                } else {
                    for (j++; j < lines.size() && indent(lines.get(j)) > indent; j++) {
                        flags.addAll(tokens(lines.get(j)));
                    }
                }
            }
        }
        if (flags.stream().noneMatch(f -> ARCHIVE_FLAGS.stream().anyMatch(f::startsWith))) {
            List<String> image = new ArrayList<>(imageFlags(file));
            image.add(IMAGE_ARCHIVE);
            image.addAll(flags);
            flags = image;
        }
        if (args.isEmpty()) {
            throw new IllegalArgumentException(file + ": no container args found");
        }
        return new Manifest(List.copyOf(flags), List.copyOf(args), Map.copyOf(env));
    }

    /** The flags joined as the environment variable holds them. */
    String javaToolOptionsValue() {
        return String.join(" ", javaToolOptions);
    }

    /**
     * The manifest's flags with its class-data archive or AOT cache (an image path) replaced by a local one, or
     * unchanged when it names none.
     */
    Manifest withArchive(Path localArchive) {
        List<String> flags = javaToolOptions.stream().map(f -> ARCHIVE_FLAGS.stream().filter(f::startsWith)
                .findFirst().map(prefix -> prefix + localArchive).orElse(f)).toList();
        return new Manifest(flags, args, env);
    }

    /** The manifest's flags without its class-data archive or AOT cache. */
    List<String> flagsWithoutArchive() {
        return javaToolOptions.stream().filter(f -> ARCHIVE_FLAGS.stream().noneMatch(f::startsWith)).toList();
    }

    boolean namesArchive() {
        return javaToolOptions.stream().anyMatch(f -> ARCHIVE_FLAGS.stream().anyMatch(f::startsWith));
    }

    /** With other arguments. */
    Manifest withArgs(List<String> newArgs) {
        return new Manifest(javaToolOptions, newArgs, env);
    }

    /** Whether the manifest passes {@code --name=...}. */
    boolean has(String name) {
        return args.stream().anyMatch(a -> a.startsWith(name + "="));
    }

    /**
     * The manifest's arguments with each {@code --name=value} whose name is a key of {@code replace} (pairs: name,
     * value, ...) set to the given value; arguments the manifest lacks are appended.
     */
    List<String> argsWith(String... replace) {
        List<String> out = new ArrayList<>(args);
        for (int k = 0; k < replace.length; k += 2) {
            String prefix = replace[k] + "=";
            String arg = prefix + replace[k + 1];
            int at = -1;
            for (int i = 0; i < out.size(); i++) {
                if (out.get(i).startsWith(prefix)) {
                    at = i;
                }
            }
            if (at >= 0) {
                out.set(at, arg);
            } else {
                out.add(arg);
            }
        }
        return out;
    }

    /** The flags of the {@code deploy/image/jvm.flags} above the manifest: one per line, {@code #} lines skipped. */
    private static List<String> imageFlags(Path manifest) throws IOException {
        for (Path dir = manifest.toAbsolutePath().getParent(); dir != null; dir = dir.getParent()) {
            Path flags = dir.resolve("image/jvm.flags");
            if (dir.getFileName() != null && dir.getFileName().toString().equals("deploy") && Files.exists(flags)) {
                return Files.readAllLines(flags).stream().map(String::strip)
                        .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
            }
        }
        throw new IllegalArgumentException(manifest + ": no JAVA_TOOL_OPTIONS naming the cache, and no"
                + " deploy/image/jvm.flags above it");
    }

    private static int indent(String line) {
        int n = 0;
        while (n < line.length() && line.charAt(n) == ' ') {
            n++;
        }
        return n;
    }

    private static List<String> tokens(String text) {
        return Arrays.stream(text.strip().split("\\s+")).filter(t -> !t.isEmpty()).toList();
    }
}
