package dev.vgpu.daemon.agent;

/**
 * What happens to a running node agent from outside its thread, handled in one place ({@code NodeAgent.handle}) on
 * the agent's thread, as NVIDIA's device plugin handles its events as cases of one loop. (A kubelet restart is the
 * adapter's own: the device-plugin library re-serves and re-registers in one place, {@code KubeletSocket.seen}, and
 * counts it through the metrics; the DRA kubelet plugin is registered again by the kubelet's plugin watcher.)
 */
sealed interface AgentEvent permits AgentEvent.Hangup, AgentEvent.NvmlUp {

    /** {@code SIGHUP}: read the configuration again, then rescan. */
    record Hangup() implements AgentEvent {
    }

    /** NVML came up after start while periodic rescans are off: rescan once, to name what only NVML can name. */
    record NvmlUp() implements AgentEvent {
    }
}
