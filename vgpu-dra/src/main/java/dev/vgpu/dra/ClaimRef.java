package dev.vgpu.dra;

import dev.vgpu.core.internal.Printable;
import java.util.Objects;

/**
 * A resource claim as the kubelet names it in NodePrepareResources and NodeUnprepareResources (docs/DRA.md §2).
 * Nothing but presence is checked here: the plugin answers a malformed reference with an error for that claim
 * alone, as the kubelet expects, rather than failing the whole call. Its text ({@link #toString()}) is safe in a log
 * line whatever the kubelet sent.
 *
 * @param namespace the claim's namespace
 * @param name      the claim's name
 * @param uid       the claim's UID, the key of every answer
 */
public record ClaimRef(String namespace, String name, String uid) {

    /** Checks that every field is there (possibly empty, as a kubelet may send). */
    public ClaimRef {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uid, "uid");
    }

    /**
     * {@code namespace/name (uid)}, each part escaped with the project's printable rule and cut at what the API
     * allows it (63, 253 and 64 characters), so that a hostile reference can neither forge a line nor grow one.
     */
    @Override
    public String toString() {
        return Printable.of(namespace, 63) + "/" + Printable.of(name, 253) + " (" + Printable.of(uid, 64) + ")";
    }
}
