package dev.vgpu.dra;

/**
 * Hears what the DRA plugin and the slice publisher do, for metrics ({@link DraPlugin.Builder#observer},
 * {@code dev.vgpu.dra.apiserver.SlicePublisher.Builder#observer}); every method does nothing unless overridden.
 *
 * <p>Threads: the claim methods are called in the plugin's serial context (on one of its scheduler threads), once
 * per answered call; the slice method on the publisher's lane; {@link #apiRejected} on the publisher's lane or the
 * plugin's read thread; an implementation must be thread-safe and must not
 * block.
 */
public interface DraObserver {

    /** Hears nothing. */
    DraObserver NONE = new DraObserver() { };

    /** One claim of a NodePrepareResources call was answered: prepared, or with an error for it. */
    default void claimPrepared(boolean prepared) {
    }

    /** One claim of a NodeUnprepareResources call was answered: unprepared (or never prepared), or with an error. */
    default void claimUnprepared(boolean unprepared) {
    }

    /** How many claims are prepared now: once at start (from the checkpoint), then after every call. */
    default void preparedClaims(int count) {
    }

    /** A publishing round created or updated this many ResourceSlices (never called with zero). */
    default void slicesPublished(int written) {
    }

    /**
     * The API server answered a request of the slice publisher or the claim reader with neither a success nor a
     * 404: {@code code} is its HTTP status (422 for a slice it refuses, 403 for missing RBAC, 409, 429, 5xx). Called
     * on the thread that made the request.
     */
    default void apiRejected(int code) {
    }
}
