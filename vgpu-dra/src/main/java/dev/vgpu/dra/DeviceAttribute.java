package dev.vgpu.dra;

import java.util.Objects;

/**
 * One value of a ResourceSlice device attribute ({@code resource.k8s.io/v1} {@code DeviceAttribute}): exactly one
 * of {@code int}, {@code bool}, {@code string} (at most 64 characters) or {@code version} (docs/DRA.md §4).
 */
public sealed interface DeviceAttribute
        permits DeviceAttribute.IntValue, DeviceAttribute.BoolValue, DeviceAttribute.StringValue,
        DeviceAttribute.VersionValue {

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

    /** A {@code string} attribute of at most 64 characters. */
    record StringValue(String value) implements DeviceAttribute {
        /** Checks the length. */
        public StringValue {
            Objects.requireNonNull(value, "value");
            if (value.length() > 64) {
                throw new IllegalArgumentException("a string attribute has at most 64 characters, got "
                        + value.length());
            }
        }

        @Override
        public String key() {
            return "string";
        }
    }

    /** A {@code version} attribute (semantic version 2.0.0), at most 64 characters. */
    record VersionValue(String value) implements DeviceAttribute {
        /** Checks the length. */
        public VersionValue {
            Objects.requireNonNull(value, "value");
            if (value.isEmpty() || value.length() > 64) {
                throw new IllegalArgumentException("a version attribute has 1-64 characters, got " + value.length());
            }
        }

        @Override
        public String key() {
            return "version";
        }
    }
}
