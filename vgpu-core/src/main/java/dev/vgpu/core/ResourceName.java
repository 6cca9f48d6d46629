package dev.vgpu.core;

import dev.vgpu.core.internal.GoText;
import dev.vgpu.core.internal.Printable;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The name part of an extended resource {@code nvidia.com/<name>}, already sanitized.
 *
 * <p>Every instance matches {@code ^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$} and contains no
 * {@code ..}: it cannot hold a path separator, NUL, whitespace, or more than 63 characters, so it is safe to
 * use in a socket file name and an environment variable. Build one with a factory for the source kind:
 * <pre>{@code
 * ResourceName.forPciDeviceName("GH100 [H200 SXM 141GB]", "2335")  // GH100_H200_SXM_141GB
 * ResourceName.forMdevType("GRID T4-1Q")                            // GRID_T4-1Q
 * ResourceName.forVgpuProfile("NVIDIA H200X-1-18C")                 // NVIDIA_H200X-1-18C
 * }</pre>
 * Factories return empty when nothing valid is left of the input.
 *
 * @param name the sanitized name without the {@code nvidia.com/} namespace
 */
public record ResourceName(String name) implements Comparable<ResourceName> {

    /** The namespace of every resource this project advertises. */
    public static final String NAMESPACE = "nvidia.com";
    /** The maximum length of the name part of an extended resource. */
    public static final int MAX_LENGTH = 63;
    /** The length of the shortest socket file name, {@code kubevirt-<8 hex digits>.sock}. */
    public static final int SHORTEST_SOCKET_FILE_NAME_BYTES = 22;

    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?");
    /** Go's (RE2's) {@code \s}: ASCII tab, newline, form feed, carriage return and space, not vertical tab. */
    private static final Pattern WHITESPACE_RUN = Pattern.compile("[\\t\\n\\f\\r ]+");
    private static final Pattern HEX_DEVICE_ID = Pattern.compile("[0-9a-fA-F]{4}");
    private static final String SOCKET_PREFIX = "kubevirt-";
    private static final String SOCKET_SUFFIX = ".sock";
    private static final int SOCKET_HASH_DIGITS = 8;


    /** Rejects anything that is not already a valid, sanitized name. */
    public ResourceName {
        if (name == null || !VALID.matcher(name).matches() || name.contains("..")) {
            throw new IllegalArgumentException("invalid resource name \""
                    + (name == null ? "null" : Printable.of(name))
                    + "\": must be 1-63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric, without \"..\"");
        }
    }

    /**
     * Applies the final sanitization shared by every source: drops characters outside {@code [A-Za-z0-9_.-]}
     * and every dot that follows a dot, then leading and trailing non-alphanumerics, and cuts to 63 characters.
     *
     * @return the name, or empty when nothing is left
     */
    public static Optional<ResourceName> sanitize(String raw) {
        if (raw == null) {
            return Optional.empty();
        }
        StringBuilder kept = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            boolean doubleDot = c == '.' && kept.length() > 0 && kept.charAt(kept.length() - 1) == '.';
            if ((isAsciiAlphanumeric(c) || c == '_' || c == '.' || c == '-') && !doubleDot) {
                kept.append(c);
            }
        }
        int start = 0;
        while (start < kept.length() && !isAsciiAlphanumeric(kept.charAt(start))) {
            start++;
        }
        int end = Math.min(kept.length(), start + MAX_LENGTH);
        while (end > start && !isAsciiAlphanumeric(kept.charAt(end - 1))) {
            end--;
        }
        return end > start ? Optional.of(new ResourceName(kept.substring(start, end))) : Optional.empty();
    }

    /**
     * Passthrough rule: the pci.ids device name trimmed, uppercased, {@code /} and {@code .} to {@code _},
     * whitespace runs to {@code _}, everything but {@code [A-Za-z0-9_]} dropped; without a usable name the
     * 4-hex device id in lowercase. Uppercasing maps each character on its own, as Go's {@code strings.ToUpper}
     * does ({@code ß} stays {@code ß} and is then dropped; it does not become {@code SS}).
     *
     * @param pciIdsName the device's name from pci.ids, or null when unknown
     * @param deviceId   the device id as sysfs prints it without {@code 0x}, e.g. {@code 2335}
     */
    public static Optional<ResourceName> forPciDeviceName(String pciIdsName, String deviceId) {
        if (pciIdsName != null) {
            String upper = toUpperPerCodePoint(GoText.trimSpace(pciIdsName)).replace('/', '_').replace('.', '_');
            String joined = WHITESPACE_RUN.matcher(upper).replaceAll("_");
            StringBuilder kept = new StringBuilder(joined.length());
            for (int i = 0; i < joined.length(); i++) {
                char c = joined.charAt(i);
                if (isAsciiAlphanumeric(c) || c == '_') {
                    kept.append(c);
                }
            }
            Optional<ResourceName> named = sanitize(kept.toString());
            if (named.isPresent()) {
                return named;
            }
        }
        if (deviceId == null || !HEX_DEVICE_ID.matcher(deviceId).matches()) {
            return Optional.empty();
        }
        return Optional.of(new ResourceName(deviceId.toLowerCase(Locale.ROOT)));
    }

    /** mdev rule: the type's {@code name} with whitespace runs replaced by {@code _}, then sanitized. */
    public static Optional<ResourceName> forMdevType(String typeName) {
        return typeName == null ? Optional.empty() : sanitize(WHITESPACE_RUN.matcher(GoText.trimSpace(typeName)).replaceAll("_"));
    }

    /** Vendor-VFIO rule: the profile name with whitespace runs replaced by {@code _}, then sanitized. */
    public static Optional<ResourceName> forVgpuProfile(String profileName) {
        return forMdevType(profileName);
    }

    /** The extended resource name sent to the kubelet, e.g. {@code nvidia.com/NVIDIA_L40S-1Q}. */
    public String fullName() {
        return NAMESPACE + "/" + name;
    }

    /**
     * The environment variable KubeVirt reads for this resource: {@code <prefix>_} followed by the full resource
     * name uppercased with {@code /} and {@code .} replaced by {@code _}, e.g.
     * {@code PCI_RESOURCE_NVIDIA_COM_NVIDIA_L40S-1Q}.
     */
    public String envVar(Attachment attachment) {
        return envVar(attachment.envPrefix());
    }

    /**
     * The environment variable KubeVirt reads for this resource under another prefix: {@code <prefix>_} followed
     * by the full resource name uppercased with {@code /} and {@code .} replaced by {@code _}.
     *
     * @param prefix the variable prefix without the trailing underscore, e.g. {@code PCI_RESOURCE}
     */
    public String envVar(String prefix) {
        if (prefix == null || prefix.isEmpty()) {
            throw new IllegalArgumentException("env var prefix must not be empty");
        }
        return prefix + "_" + fullName().toUpperCase(Locale.ROOT).replace('/', '_').replace('.', '_');
    }

    /**
     * The plugin's socket file name in full, {@code kubevirt-<name>.sock}; where a socket path must stay short, use
     * {@link #socketFileName(int)}, which gives this name whenever it fits.
     */
    public String socketFileName() {
        return SOCKET_PREFIX + name + SOCKET_SUFFIX;
    }

    /**
     * The plugin's socket file name in at most {@code maxBytes} bytes (docs/HOST-FACTS.md §2.4):
     * {@code kubevirt-<name>.sock} when it fits; otherwise {@code kubevirt-<cut>-<hash>.sock}, where
     * {@code <hash>} is the first 8 hex digits of the SHA-256 of {@link #fullName()} (so two long names that share
     * a beginning still get two files) and {@code <cut>} is the longest beginning of the name that fits, with
     * trailing {@code .}, {@code -} and {@code _} removed; {@code kubevirt-<hash>.sock} when no character of the
     * name fits. Names are ASCII, so each character is one byte. The kubelet's directory
     * {@code /var/lib/kubelet/device-plugins/} leaves 75 of a socket path's 107 bytes:
     * <pre>{@code
     * new ResourceName("NVIDIA_L40S-1Q").socketFileName(75)  // kubevirt-NVIDIA_L40S-1Q.sock
     * new ResourceName("NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-TWO_CHARS").socketFileName(75)
     *     // kubevirt-NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-a64c4e76.sock (75 bytes)
     * }</pre>
     *
     * @param maxBytes what the socket's directory leaves of a socket path
     * @return the file name, empty when even {@code kubevirt-<hash>.sock}
     *         ({@value #SHORTEST_SOCKET_FILE_NAME_BYTES} bytes) is longer than {@code maxBytes}
     */
    public Optional<String> socketFileName(int maxBytes) {
        String full = socketFileName();
        if (full.length() <= maxBytes) {
            return Optional.of(full);
        }
        if (maxBytes < SHORTEST_SOCKET_FILE_NAME_BYTES) {
            return Optional.empty();
        }
        String hash = sha256Hex(fullName()).substring(0, SOCKET_HASH_DIGITS);
        // What is left for "<cut>-" once prefix, hash and suffix are counted; the cut is shorter than the name here.
        int cut = maxBytes - SHORTEST_SOCKET_FILE_NAME_BYTES - 1;
        while (cut > 0 && !isAsciiAlphanumeric(name.charAt(cut - 1))) {
            cut--;
        }
        return Optional.of(cut > 0 ? SOCKET_PREFIX + name.substring(0, cut) + "-" + hash + SOCKET_SUFFIX
                : SOCKET_PREFIX + hash + SOCKET_SUFFIX);
    }

    @Override
    public int compareTo(ResourceName other) {
        return name.compareTo(other.name);
    }

    @Override
    public String toString() {
        return fullName();
    }

    private static String sha256Hex(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static String toUpperPerCodePoint(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().map(Character::toUpperCase).forEach(out::appendCodePoint);
        return out.toString();
    }

    private static boolean isAsciiAlphanumeric(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
}
