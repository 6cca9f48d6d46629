package dev.vgpu.core;

/** How a device is handed to a virtual machine; decides the KubeVirt environment variable prefix. */
public enum Attachment {
    /** A whole PCI function bound to a VFIO driver: passthrough GPUs and vendor-VFIO virtual functions. */
    VFIO_PCI("PCI_RESOURCE"),
    /** A mediated device (mdev vGPU), identified by its UUID. */
    MEDIATED("MDEV_PCI_RESOURCE");

    private final String envPrefix;

    Attachment(String envPrefix) {
        this.envPrefix = envPrefix;
    }

    /** The KubeVirt env var prefix without the trailing underscore, e.g. {@code PCI_RESOURCE}. */
    public String envPrefix() {
        return envPrefix;
    }
}
