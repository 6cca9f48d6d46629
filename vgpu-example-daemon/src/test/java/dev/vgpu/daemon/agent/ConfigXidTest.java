package dev.vgpu.daemon.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.jna.Library;
import com.sun.jna.Native;
import dev.vgpu.core.PciIds;
import dev.vgpu.core.RescanInterval;
import dev.vgpu.daemon.config.ConfigFile;
import dev.vgpu.daemon.config.LiveConfig;
import dev.vgpu.daemon.scan.HostOptions;
import dev.vgpu.nvml.XidPolicy;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration's XID policy in the daemon, in process with the NVML stub the daemon loads (as
 * {@link NvmlOverTimeTest}): {@code health.xid.enabled: false} registers no NVML event at all, while NVML still names
 * vGPU types; the default registers every GPU's events.
 */
class ConfigXidTest {

    private static final String CARD = "0000:c1:00.0";

    /** The stub's test-only control symbols used here. */
    interface Control extends Library {
        void stub_reset();

        long stub_calls(String function, int device);

        int stub_init_refcount();
    }

    @TempDir
    Path tmp;
    private Control stub;

    @BeforeEach
    void loadStub() {
        stub = Native.load(System.getProperty("vgpu.nvml.stub"), Control.class);
        stub.stub_reset();
    }

    @AfterEach
    void resetStub() {
        stub.stub_reset();
    }

    private NodeAgent start(XidPolicy policy) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("host-" + policy.enabled()));
        Path pluginDir = Files.createDirectories(tmp.resolve("plugins-" + policy.enabled()));
        SysfsTree tree = SysfsTree.at(root);
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(1, 100).catalog(Map.of()).create();
        tree.configureVf(SysfsTree.vfAddress(CARD, 0), 1414);
        ConfigFile file = new ConfigFile(ConfigFile.NONE.rules(), ConfigFile.NONE.typeNames(), policy);
        return Agents.devicePlugins(Agents.settings(root, Agents.nvmlStub(), RescanInterval.DISABLED,
                new LiveConfig(Optional.of(tmp.resolve("config.yaml")), "--config", file)), pluginDir);
    }

    @Test
    void xidHealthOffRegistersNoNvmlEventWhileNvmlStillNamesTypes() throws Exception {
        try (NodeAgent daemon = start(XidPolicy.off())) {
            assertThat(daemon.firstServed().resources().keySet()).extracting(Object::toString)
                    .containsExactly("nvidia.com/NVIDIA_L40S-24Q");
            assertThat(stub.stub_calls("nvmlEventSetCreate", -1)).isZero();
            assertThat(stub.stub_calls("nvmlDeviceRegisterEvents", -1)).isZero();
        }
        assertThat(stub.stub_init_refcount()).isZero();
    }

    @Test
    void theDefaultPolicyRegistersEveryGpu() throws Exception {
        try (NodeAgent daemon = start(XidPolicy.defaults())) {
            assertThat(daemon.firstServed().resources()).hasSize(1);
            assertThat(stub.stub_calls("nvmlDeviceRegisterEvents", -1)).isPositive();
        }
        assertThat(stub.stub_init_refcount()).isZero();
    }
}
