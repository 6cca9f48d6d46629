package dev.vgpu.configurator.file;

import dev.vgpu.core.internal.Printable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * vgpu-device-manager's {@code version: v1} format: YAML 1.2 (core schema) loaded into maps and lists by
 * snakeyaml-engine, then every field checked here, so that each refusal names the field's path
 * ({@code vgpu-configs.default[1].device-filter[0]}) and what would be accepted. What its own parser refuses is
 * refused (an unknown field, a missing {@code devices} or {@code vgpu-devices}, a layout without entries); what it
 * quietly ignores is refused too where it can only be a mistake (a device filter that is not a number). Stateless.
 */
final class VgpuConfigParser {

    private static final Set<String> TOP = Set.of("version", "vgpu-configs");
    private static final Set<String> ENTRY = Set.of("devices", "device-filter", "vgpu-devices");
    /** More vGPUs of one profile than any card has VFs for (PCIe allows at most 65535 VFs). */
    private static final int MAX_COUNT = 0xffff;
    /** Layout names listed at most in a message. */
    private static final int LISTED = 20;

    private VgpuConfigParser() {
    }

    static VgpuConfigFile parse(String text) throws InvalidVgpuConfigException {
        Object document = load(text);
        if (document == null) {
            throw new InvalidVgpuConfigException("", "the file is empty; it needs \"version: "
                    + VgpuConfigFile.VERSION + "\" and \"vgpu-configs\"");
        }
        Map<String, Object> top = mapping(document, "(the file)");
        onlyKeys(top, "", TOP);
        Object version = top.get("version");
        if (version == null) {
            throw new InvalidVgpuConfigException("version", "missing; the file must say \"version: "
                    + VgpuConfigFile.VERSION + "\"");
        }
        if (!VgpuConfigFile.VERSION.equals(version)) {
            throw new InvalidVgpuConfigException("version", show(version) + " is not a version this reads (it reads "
                    + VgpuConfigFile.VERSION + ", vgpu-device-manager's)");
        }
        Object configs = top.get("vgpu-configs");
        if (configs == null) {
            throw new InvalidVgpuConfigException("vgpu-configs", "missing; name at least one layout");
        }
        Map<String, Object> layouts = mapping(configs, "vgpu-configs");
        if (layouts.isEmpty()) {
            throw new InvalidVgpuConfigException("vgpu-configs", "empty; name at least one layout");
        }
        Map<String, List<VgpuConfigSpec>> parsed = new LinkedHashMap<>();
        for (Map.Entry<String, Object> layout : layouts.entrySet()) {
            String path = "vgpu-configs." + layout.getKey();
            if (layout.getKey().isBlank()) {
                throw new InvalidVgpuConfigException(path, "a layout needs a name");
            }
            List<Object> entries = list(layout.getValue(), path);
            if (entries.isEmpty()) {
                throw new InvalidVgpuConfigException(path, "empty; a layout needs at least one entry");
            }
            List<VgpuConfigSpec> specs = new ArrayList<>();
            for (int i = 0; i < entries.size(); i++) {
                specs.add(entry(entries.get(i), path + "[" + i + "]"));
            }
            parsed.put(layout.getKey(), specs);
        }
        return new VgpuConfigFile(parsed);
    }

    private static Object load(String text) throws InvalidVgpuConfigException {
        LoadSettings settings = LoadSettings.builder().setSchema(new CoreSchema()).setAllowDuplicateKeys(false)
                .setMaxAliasesForCollections(10).setLabel("vgpu-config").build();
        try {
            return new Load(settings).loadFromString(text);
        } catch (MarkedYamlEngineException e) {
            String where = e.getProblemMark().map(m -> "line " + (m.getLine() + 1) + ", column " + (m.getColumn() + 1)
                    + ": ").orElse("");
            throw new InvalidVgpuConfigException("", "not valid YAML: " + where + e.getProblem()
                    + (e.getContext() == null ? "" : " (" + e.getContext() + ")"));
        } catch (YamlEngineException e) {
            String message = e.getMessage() == null ? "unknown problem" : e.getMessage().lines().findFirst().orElse("");
            throw new InvalidVgpuConfigException("", "not valid YAML: " + Printable.of(message, 200));
        } catch (StackOverflowError e) {
            throw new InvalidVgpuConfigException("", "not valid YAML: nested too deeply");
        }
    }

    private static VgpuConfigSpec entry(Object value, String path) throws InvalidVgpuConfigException {
        if (value instanceof String) {
            throw new InvalidVgpuConfigException(path, show(value) + " is a bare profile name (an older"
                    + " vgpu-device-manager format); write {devices: all, vgpu-devices: {" + show(value) + ": <count>}}");
        }
        Map<String, Object> fields = mapping(value, path);
        onlyKeys(fields, path, ENTRY);
        for (String required : List.of("devices", "vgpu-devices")) {
            if (!fields.containsKey(required)) {
                throw new InvalidVgpuConfigException(path + "." + required, "missing");
            }
        }
        return new VgpuConfigSpec(path, devices(fields.get("devices"), path + ".devices"),
                deviceFilter(fields.get("device-filter"), path + ".device-filter"),
                vgpuDevices(fields.get("vgpu-devices"), path + ".vgpu-devices"));
    }

    /** {@code all}, or a list of GPU indexes. */
    private static Optional<SortedSet<Integer>> devices(Object value, String path) throws InvalidVgpuConfigException {
        if ("all".equals(value)) {
            return Optional.empty();
        }
        if (!(value instanceof List<?> list)) {
            throw new InvalidVgpuConfigException(path, "expected \"all\" or a list of GPU indexes such as [0, 1], got "
                    + describe(value));
        }
        SortedSet<Integer> indexes = new TreeSet<>();
        for (int i = 0; i < list.size(); i++) {
            Object index = list.get(i);
            if (!(index instanceof Integer n) || n < 0) {
                throw new InvalidVgpuConfigException(path + "[" + i + "]", describe(index) + " is not a GPU index (0"
                        + " for the card with the lowest PCI address, then 1, ...)");
            }
            indexes.add(n);
        }
        return Optional.of(indexes);
    }

    /** Absent, one id, or a list of ids: {@code "0x26B910DE"} (device << 16 | vendor, as mig-parted writes it). */
    private static SortedSet<Long> deviceFilter(Object value, String path) throws InvalidVgpuConfigException {
        SortedSet<Long> ids = new TreeSet<>();
        if (value == null) {
            return ids;
        }
        if (value instanceof List<?> list) {
            if (list.isEmpty()) {
                throw new InvalidVgpuConfigException(path, "an empty list; leave the field out to match every card");
            }
            for (int i = 0; i < list.size(); i++) {
                ids.add(deviceId(list.get(i), path + "[" + i + "]"));
            }
        } else {
            ids.add(deviceId(value, path));
        }
        return ids;
    }

    private static long deviceId(Object value, String path) throws InvalidVgpuConfigException {
        if ((value instanceof Integer || value instanceof Long) && ((Number) value).longValue() >= 0
                && ((Number) value).longValue() <= 0xffff_ffffL) {
            return ((Number) value).longValue();
        }
        if (value instanceof String text) {
            String digits = text.strip();
            if (digits.matches("0[xX][0-9a-fA-F]{1,8}")) {
                return Long.parseLong(digits.substring(2), 16);
            }
            if (digits.matches("[0-9]{1,10}") && Long.parseLong(digits) <= 0xffff_ffffL) {
                return Long.parseLong(digits);
            }
        }
        throw new InvalidVgpuConfigException(path, describe(value) + " is not a device id: write the PCI device id"
                + " and vendor id as one 32-bit hex number, device first, such as \"0x26B910DE\" (an L40S)");
    }

    private static Map<String, Integer> vgpuDevices(Object value, String path) throws InvalidVgpuConfigException {
        if (value == null) {
            throw new InvalidVgpuConfigException(path, "expected a mapping of profile to count such as {\"L40S-12Q\":"
                    + " 4}, or {} for no vGPUs, got nothing (null)");
        }
        if (!(value instanceof Map<?, ?> map)) {
            throw new InvalidVgpuConfigException(path, "expected a mapping of profile to count such as {\"L40S-12Q\":"
                    + " 4}, got " + describe(value));
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String profile) || profile.isBlank()) {
                throw new InvalidVgpuConfigException(path + "." + show(entry.getKey()), "a profile name is text such"
                        + " as \"L40S-12Q\" or \"NVIDIA L40S-12Q\"");
            }
            String at = path + "." + profile;
            if (!(entry.getValue() instanceof Integer count) || count < 0 || count > MAX_COUNT) {
                throw new InvalidVgpuConfigException(at, describe(entry.getValue()) + " is not a count of vGPUs (a"
                        + " whole number from 0 to " + MAX_COUNT + ")");
            }
            counts.put(profile, count);
        }
        return counts;
    }

    // --- shapes -------------------------------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    private static Map<String, Object> mapping(Object value, String path) throws InvalidVgpuConfigException {
        if (!(value instanceof Map<?, ?> map)) {
            throw new InvalidVgpuConfigException(path, "expected a mapping (field: value), got " + describe(value));
        }
        for (Object key : map.keySet()) {
            if (!(key instanceof String)) {
                throw new InvalidVgpuConfigException(path, "names are text; " + show(key) + " is not (quote it)");
            }
        }
        return (Map<String, Object>) map;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value, String path) throws InvalidVgpuConfigException {
        if (!(value instanceof List<?>)) {
            throw new InvalidVgpuConfigException(path, "expected a list of entries ({devices: ..., vgpu-devices:"
                    + " ...}), got " + describe(value));
        }
        return (List<Object>) value;
    }

    private static void onlyKeys(Map<String, Object> map, String path, Set<String> allowed)
            throws InvalidVgpuConfigException {
        for (String key : map.keySet()) {
            if (!allowed.contains(key)) {
                throw new InvalidVgpuConfigException(path.isEmpty() ? key : path + "." + key, "unknown field (known"
                        + " here: " + String.join(", ", new TreeSet<>(allowed)) + ")");
            }
        }
    }

    /** A parsed value in words: {@code a mapping}, {@code the number 3}, {@code "text"}. */
    private static String describe(Object value) {
        if (value == null || value instanceof Map || value instanceof List) {
            return value == null ? "nothing (null)" : value instanceof Map ? "a mapping" : "a list";
        }
        if (value instanceof String) {
            return show(value);
        }
        return (value instanceof Boolean ? "the boolean " : "the number ") + value;
    }

    /** A value for a message: text quoted and escaped, anything else as printed. */
    static String show(Object value) {
        return value instanceof String s ? "\"" + Printable.of(s, 120) + "\"" : Printable.of(String.valueOf(value),
                120);
    }

    /** At most {@value #LISTED} names, quoted, then how many more. */
    static String listed(List<String> names) {
        List<String> shown = new ArrayList<>(names.stream().limit(LISTED).map(VgpuConfigParser::show).toList());
        if (names.size() > LISTED) {
            shown.add("and " + (names.size() - LISTED) + " more");
        }
        return String.join(", ", shown);
    }
}
