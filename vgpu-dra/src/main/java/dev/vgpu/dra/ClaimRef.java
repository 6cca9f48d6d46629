package dev.vgpu.dra;

import java.util.Objects;

/**
 * A resource claim as the kubelet names it in NodePrepareResources and NodeUnprepareResources (docs/DRA.md §2).
 * Nothing but presence is checked here: the plugin answers a malformed reference with an error for that claim
 * alone, as the kubelet expects, rather than failing the whole call.
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

    @Override
    public String toString() {
        return namespace + "/" + name + " (" + uid + ")";
    }
}
