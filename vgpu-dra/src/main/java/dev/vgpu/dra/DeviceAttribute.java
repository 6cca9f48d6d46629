package dev.vgpu.dra;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One value of a ResourceSlice device attribute ({@code resource.k8s.io/v1} {@code DeviceAttribute}): exactly one
 * of {@code int}, {@code bool}, {@code string} (at most 64 bytes of UTF-8) or {@code version} (docs/DRA.md §4).
 */
public sealed interface DeviceAttribute
        permits DeviceAttribute.IntValue, DeviceAttribute.BoolValue, DeviceAttribute.StringValue,
        DeviceAttribute.VersionValue {

    /**
     * The most bytes a {@code string} or {@code version} value may have. The API server counts the value's UTF-8
     * bytes (Go's {@code len}), not its characters: 22 characters of a CJK name are 66 bytes.
     */
    int MAX_VALUE_BYTES = 64;

    /** The value's length as the API server counts it: its UTF-8 bytes. */
    static int bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8).length;
    }

    /** The JSON key the value goes under: {@code int}, {@code bool}, {@code string} or {@code version}. */
    String key();

    /** An {@code int} attribute. */
    record IntValue(long value) implements DeviceAttribute {
        @Override
        public String key() {
            return "int";
        }
    }

    /** A {@code bool} attribute. */
    record BoolValue(boolean value) implements DeviceAttribute {
        @Override
        public String key() {
            return "bool";
        }
    }

    /** A {@code string} attribute of at most {@value #MAX_VALUE_BYTES} bytes of UTF-8. */
    record StringValue(String value) implements DeviceAttribute {
        /** Checks the length in bytes. */
        public StringValue {
            Objects.requireNonNull(value, "value");
            if (!fits(value)) {
                throw new IllegalArgumentException("a string attribute has at most " + MAX_VALUE_BYTES
                        + " bytes of UTF-8, got " + bytes(value));
            }
        }

        /** Whether {@code value} fits a string attribute (at most {@value #MAX_VALUE_BYTES} bytes of UTF-8). */
        public static boolean fits(String value) {
            return bytes(value) <= MAX_VALUE_BYTES;
        }

        @Override
        public String key() {
            return "string";
        }
    }

    /** A {@code version} attribute (semantic version 2.0.0), at most {@value #MAX_VALUE_BYTES} bytes. */
    record VersionValue(String value) implements DeviceAttribute {
        /** Checks the length in bytes. */
        public VersionValue {
            Objects.requireNonNull(value, "value");
            if (value.isEmpty() || bytes(value) > MAX_VALUE_BYTES) {
                throw new IllegalArgumentException("a version attribute has 1-" + MAX_VALUE_BYTES
                        + " bytes of UTF-8, got " + bytes(value));
            }
        }

        @Override
        public String key() {
            return "version";
        }
    }
}
