package dev.vgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.jna.Library;
import com.sun.jna.Native;
import dev.vgpu.core.PciAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The C stub of {@code libnvidia-ml.so.1} ({@code src/test/c/nvml_stub.c}) that the build compiles into
 * {@code target/stub/}, and its test-only control symbols. A missing stub fails the test; it never skips.
 */
final class NvmlStub {

    /** {@code NVML_ERROR_DRIVER_NOT_LOADED}: what nvmlInit_v2 answers while the driver is still loading. */
    static final int DRIVER_NOT_LOADED = 9;
    /** {@code NVML_ERROR_GPU_IS_LOST}. */
    static final int GPU_IS_LOST = 15;

    /** Event type bit of XID critical errors. */
    static final long XID = 0x8L;

    static final PciAddress GPU0 = PciAddress.parse("0000:41:00.0");
    static final PciAddress GPU1 = PciAddress.parse("0000:c1:00.0");
    static final PciAddress GPU2_MANY_TYPES = PciAddress.parse("0001:03:00.0");
    static final PciAddress GPU3_NO_VGPU = PciAddress.parse("0000:81:00.0");

    /** The stub's control symbols (see the comments in nvml_stub.c). */
    interface Control extends Library {
        void stub_reset();

        void stub_clear_events();

        void stub_queue_event(int device, long type, long data);

        void stub_queue_instance_event(int device, long type, long data, int gpuInstance);

        void stub_set_init_result(int rc);

        void stub_set_wait_result(int rc);

        void stub_fail_bus_id_lookups(int device, int rc, int times);

        long stub_calls(String function, int device);

        long stub_calls_uninitialized();

        long stub_invalid_handles();

        int stub_init_refcount();

        int stub_last_wait_timeout();

        int stub_live_event_sets();

        int stub_queued_events();

        long stub_events_taken();

        long stub_layout(String what);
    }

    private NvmlStub() {
    }

    /** The stub, as the build placed it; fails when it is missing. */
    static Path library() {
        return existing("vgpu.nvml.stub");
    }

    /** The stub built without nvmlDeviceGetHandleByPciBusId_v2, like an old driver. */
    static Path oldDriverLibrary() {
        return existing("vgpu.nvml.stub.old");
    }

    /** Control of the stub at {@link #library()}: the same loaded object the binding uses. */
    static Control control() {
        return Native.load(library().toString(), Control.class);
    }

    static Control oldDriverControl() {
        return Native.load(oldDriverLibrary().toString(), Control.class);
    }

    /** Calls of one entry point across all devices. */
    static long calls(Control stub, String function) {
        return stub.stub_calls(function, -1);
    }

    /** Checks that the binding never handed the stub an unknown handle nor called it uninitialized. */
    static void assertNoMisuse(Control stub) {
        assertThat(stub.stub_invalid_handles()).as("unknown handles passed to NVML").isZero();
        assertThat(stub.stub_calls_uninitialized()).as("NVML calls while not initialized").isZero();
    }

    private static Path existing(String property) {
        String value = System.getProperty(property);
        assertThat(value).as("system property %s (set by the pom's surefire configuration)", property).isNotBlank();
        Path path = Path.of(value);
        assertThat(Files.isRegularFile(path)).as("NVML stub built at %s (needs gcc)", path).isTrue();
        return path;
    }
}
