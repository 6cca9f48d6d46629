package dev.vgpu.nvml;

import dev.vgpu.core.PciAddress;

/**
 * Receives critical XID errors from an {@link XidWatcher}, always on the watcher's own thread, one call at
 * a time. A listener should return quickly (hand the news to its own queue); an exception it throws is
 * logged and the watcher carries on.
 */
@FunctionalInterface
public interface XidListener {

    /**
     * A physical GPU reported a critical XID that is not on the ignore list.
     *
     * @param gpu the physical GPU, in sysfs form (converted from NVML's bus id)
     * @param xid the XID number; 999 means NVML did not know the XID
     */
    void onXid(PciAddress gpu, long xid);

    /**
     * Every critical-XID event, ignored ones too, once per event (also when NVML named no GPU and it concerns
     * every watched one). By default a counted event calls {@link #onXid} once for each GPU it concerns and an
     * ignored one does nothing; override it to count every XID or to use the event's GPU instance.
     *
     * @param event the XID, the GPU(s), the GPU instance and whether it counts
     */
    default void onXidEvent(XidEvent event) {
        if (event.counted()) {
            for (PciAddress gpu : event.gpus()) {
                onXid(gpu, event.xid());
            }
        }
    }

    /**
     * A physical GPU cannot report XID errors (too old, or NVML refused to register it); told once per GPU,
     * before any {@link #onXid}. Does nothing unless overridden.
     *
     * @param gpu    the physical GPU
     * @param reason the NVML error name and text
     */
    default void onEventsUnsupported(PciAddress gpu, String reason) {
    }
}
