package dev.vgpu.core;

/** Short constructors for devices in tests. */
final class TestDevices {

    private TestDevices() {
    }

    static ResourceName name(String name) {
        return new ResourceName(name);
    }

    /** A VFIO PCI function (passthrough GPU or VF) with its BDF as id. */
    static Device.Builder pci(String bdf, String resource, String source) {
        return Device.builder(bdf, name(resource), source, Attachment.VFIO_PCI);
    }

    /** A mediated device with its UUID as id. */
    static Device.Builder mdev(String uuid, String resource, String source) {
        return Device.builder(uuid, name(resource), source, Attachment.MEDIATED);
    }

    static PciAddress bdf(String text) {
        return PciAddress.parse(text);
    }
}
