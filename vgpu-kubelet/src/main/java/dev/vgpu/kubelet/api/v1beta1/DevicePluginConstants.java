package dev.vgpu.kubelet.api.v1beta1;

/**
 * The names the device-plugin API v1beta1 fixes beside its messages (the kubelet's {@code constants.go} of the same
 * API): defined here once, beside the API they belong to, for the adapter and the stand-in kubelet alike.
 */
public final class DevicePluginConstants {

    /** The file name of the kubelet's registration socket in the device-plugin directory. */
    public static final String KUBELET_SOCKET = "kubelet.sock";

    private DevicePluginConstants() {
    }
}
