package dev.vgpu.daemon.config;

import dev.vgpu.core.DeviceMatch;
import dev.vgpu.core.DeviceRules;
import dev.vgpu.core.RenameRule;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.internal.Durations;
import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.spi.VgpuTypeNameTable;
import dev.vgpu.nvml.XidPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The {@code version: v1} configuration file: YAML 1.2 (core schema) loaded into maps and lists by snakeyaml-engine,
 * then every field checked here, so that each refusal names the field's path ({@code resources[1].match.deviceId})
 * and what would be accepted. Unknown fields are refused rather than ignored: a misspelt {@code exlcude} must not
 * silently advertise what it meant to leave out. The schema is the README's "Configuration file".
 */
public final class ConfigParser {

    /** The one version this daemon reads. */
    static final String VERSION = "v1";
    private static final String NAMESPACE = ResourceName.NAMESPACE + "/";
    private static final Set<String> TOP = Set.of("version", "resources", "exclude", "vgpuTypeNames", "health");
    private static final Set<String> MATCH = Set.of("source", "deviceId", "profile", "address");

    /** Larger files are refused unread: a configuration is a few kilobytes. */
    static final int MAX_BYTES = 1 << 20;

    private ConfigParser() {
    }

    /**
     * Reads and checks a file.
     *
     * @throws ConfigFile.Invalid when it cannot be read, is not UTF-8 YAML, or says anything this version does not accept
     */
    public static ConfigFile read(Path file) throws ConfigFile.Invalid {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new ConfigFile.Invalid("", "the file does not exist");
        } catch (IOException e) {
            throw new ConfigFile.Invalid("", Files.isDirectory(file) ? "it is a directory, not a file"
                    : "the file cannot be read (" + e.getMessage() + ")");
        }
        if (bytes.length > MAX_BYTES) {
            throw new ConfigFile.Invalid("", "the file is larger than " + MAX_BYTES + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new ConfigFile.Invalid("", "the file is not UTF-8 text");
        }
        return parse(text);
    }

    /**
     * Checks a configuration given as text (an environment variable), with the file's size limit.
     *
     * @throws ConfigFile.Invalid when it is too large, is not YAML, or says anything this version does not accept
     */
    public static ConfigFile parseText(String text) throws ConfigFile.Invalid {
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new ConfigFile.Invalid("", "the text is larger than " + MAX_BYTES + " bytes");
        }
        return parse(text);
    }

    /** Parses and checks one file's text. */
    static ConfigFile parse(String text) throws ConfigFile.Invalid {
        Object document = load(text);
        if (document == null) {
            throw new ConfigFile.Invalid("", "the file is empty; it needs at least \"version: " + VERSION + "\"");
        }
        Map<String, Object> top = mapping(document, "(the file)");
        onlyKeys(top, "", TOP);
        version(top.get("version"));
        List<RenameRule> renames = new ArrayList<>();
        List<Object> resources = listOrEmpty(top.get("resources"), "resources");
        for (int i = 0; i < resources.size(); i++) {
            String path = "resources[" + i + "]";
            Map<String, Object> entry = mapping(resources.get(i), path);
            onlyKeys(entry, path, Set.of("match", "name"));
            DeviceMatch match = match(required(entry, "match", path), path + ".match");
            renames.add(new RenameRule(match, resourceName(required(entry, "name", path), path + ".name")));
        }
        List<DeviceMatch> exclusions = new ArrayList<>();
        List<Object> exclude = listOrEmpty(top.get("exclude"), "exclude");
        for (int i = 0; i < exclude.size(); i++) {
            exclusions.add(match(exclude.get(i), "exclude[" + i + "]"));
        }
        return new ConfigFile(new DeviceRules(renames, exclusions), typeNames(top.get("vgpuTypeNames")),
                health(top.get("health")));
    }

    private static Object load(String text) throws ConfigFile.Invalid {
        LoadSettings settings = LoadSettings.builder().setSchema(new CoreSchema()).setAllowDuplicateKeys(false)
                .setMaxAliasesForCollections(10).setLabel("config").build();
        try {
            return new Load(settings).loadFromString(text);
        } catch (MarkedYamlEngineException e) {
            String where = e.getProblemMark().map(m -> "line " + (m.getLine() + 1) + ", column " + (m.getColumn() + 1)
                    + ": ").orElse("");
            throw new ConfigFile.Invalid("", "not valid YAML: " + where + e.getProblem()
                    + (e.getContext() == null ? "" : " (" + e.getContext() + ")"));
        } catch (YamlEngineException e) {
            throw new ConfigFile.Invalid("", "not valid YAML: " + firstLine(e.getMessage()));
        } catch (StackOverflowError e) {
            throw new ConfigFile.Invalid("", "not valid YAML: nested too deeply");
        }
    }

    private static void version(Object value) throws ConfigFile.Invalid {
        if (value == null) {
            throw new ConfigFile.Invalid("version", "missing; the file must say \"version: " + VERSION + "\"");
        }
        if (!VERSION.equals(value)) {
            throw new ConfigFile.Invalid("version", show(value) + " is not a version this daemon reads (it reads "
                    + VERSION + ")");
        }
    }

    private static DeviceMatch match(Object value, String path) throws ConfigFile.Invalid {
        Map<String, Object> fields = mapping(value, path);
        onlyKeys(fields, path, MATCH);
        if (fields.isEmpty()) {
            throw new ConfigFile.Invalid(path, "empty; give at least one of source, deviceId, profile, address");
        }
        Optional<String> source = field(fields, "source", path, DeviceMatch::source);
        Optional<String> deviceId = field(fields, "deviceId", path, DeviceMatch::deviceId);
        Optional<String> profile = field(fields, "profile", path, DeviceMatch::profile);
        Optional<String> address = field(fields, "address", path, DeviceMatch::address);
        return new DeviceMatch(source, deviceId, profile, address);
    }

    /** One field of a match, checked on its own so that a refusal names that field. */
    private static Optional<String> field(Map<String, Object> fields, String name, String path,
                                          Function<String, DeviceMatch> check) throws ConfigFile.Invalid {
        if (!fields.containsKey(name)) {
            return Optional.empty();
        }
        String text = string(fields.get(name), path + "." + name,
                name.equals("deviceId") ? " (quote it: \"2331\", so that YAML keeps it as written)" : "");
        try {
            check.apply(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigFile.Invalid(path + "." + name, e.getMessage());
        }
        return Optional.of(text);
    }

    private static ResourceName resourceName(Object value, String path) throws ConfigFile.Invalid {
        String text = string(value, path, "");
        if (!text.startsWith(NAMESPACE)) {
            throw new ConfigFile.Invalid(path, show(text) + " is not a full extended-resource name: write "
                    + NAMESPACE + "<name>, e.g. " + NAMESPACE + "pgpu");
        }
        try {
            return new ResourceName(text.substring(NAMESPACE.length()));
        } catch (IllegalArgumentException e) {
            throw new ConfigFile.Invalid(path, show(text) + " is not a valid resource name: the part after "
                    + NAMESPACE + " must be 1-63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric,"
                    + " without \"..\"");
        }
    }

    private static VgpuTypeNameTable typeNames(Object value) throws ConfigFile.Invalid {
        if (value == null) {
            return VgpuTypeNameTable.empty();
        }
        Map<String, Map<Long, String>> table = new LinkedHashMap<>();
        for (Map.Entry<?, ?> card : entries(value, "vgpuTypeNames")) {
            String deviceId = key(card.getKey(), "vgpuTypeNames",
                    " (quote the device id: \"26b9\": ..., so that YAML keeps it as written)");
            String path = "vgpuTypeNames." + deviceId;
            if (!deviceId.matches("[0-9a-fA-F]{4}")) {
                throw new ConfigFile.Invalid(path, show(deviceId) + " is not 4 hex digits (the PF's PCI device id,"
                        + " such as \"26b9\")");
            }
            Map<Long, String> types = new LinkedHashMap<>();
            for (Map.Entry<?, ?> type : entries(card.getValue(), path)) {
                long typeId = typeId(type.getKey(), path);
                String name = string(type.getValue(), path + "." + typeId, "");
                if (name.isBlank()) {
                    throw new ConfigFile.Invalid(path + "." + typeId, "the profile name is empty");
                }
                types.put(typeId, name);
            }
            if (table.put(deviceId.toLowerCase(java.util.Locale.ROOT), types) != null) {
                throw new ConfigFile.Invalid(path, "the device id is given twice (hex digits in another case)");
            }
        }
        return new VgpuTypeNameTable(table);
    }

    private static long typeId(Object key, String path) throws ConfigFile.Invalid {
        Object id = key instanceof String s && s.matches("[0-9]{1,18}") ? Long.valueOf(s) : key;
        if ((id instanceof Integer || id instanceof Long) && ((Number) id).longValue() >= 0) {
            return ((Number) id).longValue();
        }
        throw new ConfigFile.Invalid(path + "." + show(key), "not a vGPU type id (a decimal number such as \"1153\")");
    }

    private static XidPolicy health(Object value) throws ConfigFile.Invalid {
        XidPolicy policy = XidPolicy.defaults();
        if (value == null) {
            return policy;
        }
        Map<String, Object> health = mapping(value, "health");
        onlyKeys(health, "health", Set.of("xid"));
        if (health.get("xid") == null) {
            return policy;
        }
        Map<String, Object> xid = mapping(health.get("xid"), "health.xid");
        onlyKeys(xid, "health.xid", Set.of("enabled", "ignored", "recoverAfter"));
        if (xid.containsKey("enabled")) {
            if (!(xid.get("enabled") instanceof Boolean enabled)) {
                throw new ConfigFile.Invalid("health.xid.enabled", "expected true or false, got "
                        + describe(xid.get("enabled")));
            }
            policy = new XidPolicy(enabled, policy.ignored());
        }
        if (xid.containsKey("ignored")) {
            Set<Long> ignored = new LinkedHashSet<>();
            List<Object> list = list(xid.get("ignored"), "health.xid.ignored");
            for (int i = 0; i < list.size(); i++) {
                Object x = list.get(i);
                if (!(x instanceof Integer || x instanceof Long) || ((Number) x).longValue() <= 0) {
                    throw new ConfigFile.Invalid("health.xid.ignored[" + i + "]", show(x)
                            + " is not an XID (a positive integer such as 43)");
                }
                ignored.add(((Number) x).longValue());
            }
            policy = policy.withIgnored(ignored);
        }
        if (xid.containsKey("recoverAfter")) {
            policy = policy.withRecoverAfter(recoverAfter(xid.get("recoverAfter")));
        }
        return policy;
    }

    /** {@code recoverAfter}: a Go duration, zero (never, the default) or positive; a bare 0 is zero too. */
    private static Duration recoverAfter(Object value) throws ConfigFile.Invalid {
        String path = "health.xid.recoverAfter";
        String text = value instanceof Integer i && i == 0 ? "0" : string(value, path,
                " (a Go duration such as 10m, or 0 for never)");
        Duration duration;
        try {
            duration = Durations.parseGo(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigFile.Invalid(path, show(text) + " is not a Go duration (" + e.getMessage()
                    + "); write e.g. 10m, or 0s for never");
        }
        if (duration.isNegative()) {
            throw new ConfigFile.Invalid(path, show(text) + " is negative; write a quiet period such as 10m, or 0s"
                    + " for never");
        }
        return duration;
    }

    // --- shapes -------------------------------------------------------------------------------------------------

    private static Object required(Map<String, Object> map, String key, String path) throws ConfigFile.Invalid {
        Object value = map.get(key);
        if (value == null) {
            throw new ConfigFile.Invalid(path + "." + key, "missing");
        }
        return value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> mapping(Object value, String path) throws ConfigFile.Invalid {
        if (!(value instanceof Map<?, ?> map)) {
            throw new ConfigFile.Invalid(path, "expected a mapping (field: value), got " + describe(value));
        }
        for (Object key : map.keySet()) {
            if (!(key instanceof String)) {
                throw new ConfigFile.Invalid(path, "field names are text; " + show(key) + " is not");
            }
        }
        return (Map<String, Object>) map;
    }

    private static List<Map.Entry<?, ?>> entries(Object value, String path) throws ConfigFile.Invalid {
        if (!(value instanceof Map<?, ?> map)) {
            throw new ConfigFile.Invalid(path, "expected a mapping, got " + describe(value));
        }
        return new ArrayList<>(map.entrySet());
    }

    private static void onlyKeys(Map<String, Object> map, String path, Set<String> allowed)
            throws ConfigFile.Invalid {
        for (String key : map.keySet()) {
            if (!allowed.contains(key)) {
                throw new ConfigFile.Invalid(path.isEmpty() ? key : path + "." + key, "unknown field (known here: "
                        + String.join(", ", new java.util.TreeSet<>(allowed)) + ")");
            }
        }
    }

    private static List<Object> listOrEmpty(Object value, String path) throws ConfigFile.Invalid {
        return value == null ? List.of() : list(value, path);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value, String path) throws ConfigFile.Invalid {
        if (!(value instanceof List<?>)) {
            throw new ConfigFile.Invalid(path, "expected a list, got " + describe(value));
        }
        return (List<Object>) value;
    }

    private static String string(Object value, String path, String hint) throws ConfigFile.Invalid {
        if (!(value instanceof String text)) {
            throw new ConfigFile.Invalid(path, "expected text, got " + describe(value) + hint);
        }
        return text;
    }

    private static String key(Object value, String path, String hint) throws ConfigFile.Invalid {
        if (!(value instanceof String text)) {
            throw new ConfigFile.Invalid(path + "." + show(value), "expected text, got " + describe(value) + hint);
        }
        return text;
    }

    private static String describe(Object value) {
        if (value == null) {
            return "nothing (null)";
        }
        if (value instanceof Map) {
            return "a mapping";
        }
        if (value instanceof List) {
            return "a list";
        }
        if (value instanceof Boolean) {
            return "the boolean " + value;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof BigInteger) {
            return "the number " + value;
        }
        if (value instanceof Number) {
            return "the number " + value;
        }
        return show(value);
    }

    private static String show(Object value) {
        return value instanceof String s ? "\"" + Printable.of(s) + "\"" : String.valueOf(value);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unknown problem";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
