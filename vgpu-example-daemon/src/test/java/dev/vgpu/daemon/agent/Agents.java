package dev.vgpu.daemon.agent;

import dev.vgpu.core.PciIds;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.core.spi.DeviceSources;
import dev.vgpu.core.spi.Host;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.deviceplugin.DevicePluginAdapter;
import dev.vgpu.daemon.scan.HostOptions;
import java.nio.file.Path;
import java.util.Optional;

/** Node agents in process, as {@code serve} starts them, for the agent's tests. */
final class Agents {

    private Agents() {
    }

    /** The NVML stub the build compiles ({@code vgpu.nvml.stub}) as the named library. */
    static HostOptions nvmlStub() {
        return new HostOptions(null, Path.of(System.getProperty("vgpu.nvml.stub")), false);
    }

    /** Settings of a host root without pci.ids names, a state directory or metrics. */
    static NodeAgent.Settings settings(Path root, HostOptions options, RescanInterval interval, LiveConfig config) {
        return new NodeAgent.Settings(Host.of(root).withPciIds(PciIds.empty()),
                new NodeAgent.PciIdsInUse("none", "none"), DeviceSources.load(), Optional.empty(), interval,
                Optional.empty(), NodeAgent.DEFAULT_SCAN_DEADLINE, NodeAgent.DEFAULT_FAILED_SCANS_LIMIT, config,
                options, NodeAgent.HostPreparation.NONE);
    }

    /** Starts an agent serving the device-plugin API in {@code pluginDir}. */
    static NodeAgent devicePlugins(NodeAgent.Settings settings, Path pluginDir) {
        return NodeAgent.start(settings, DevicePluginAdapter.opener(pluginDir), agent -> { });
    }
}
