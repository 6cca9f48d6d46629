package dev.vgpu.daemon.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.kubelet.standin.DeviceState;
import dev.vgpu.kubelet.standin.Registration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What the {@code kubelet} command prints for each change the stand-in kubelet sees. */
class KubeletViewTest {

    private static final String R = "nvidia.com/NVIDIA_H200X-1-18C";
    private static final Registration REGISTER = new Registration("v1beta1", "kubevirt-NVIDIA_H200X-1-18C.sock", R,
            false, true);

    private static DeviceState device(String id, String health) {
        return new DeviceState(id, health, OptionalInt.of(0));
    }

    private static KubeletView view(List<Registration> registrations, List<DeviceState> devices, boolean streaming) {
        return new KubeletView(registrations, devices == null ? Map.of() : Map.of(R, devices),
                streaming ? Set.of(R) : Set.of());
    }

    @Test
    void aRegistrationAndAFirstListAreOneLineEach() {
        KubeletView now = view(List.of(REGISTER), List.of(device("0000:1b:00.4", "Healthy")), true);
        assertThat(now.changesSince(KubeletView.empty())).containsExactly(
                "register " + R + ": endpoint kubevirt-NVIDIA_H200X-1-18C.sock, API v1beta1, preferred allocation"
                        + " offered",
                R + ": 1 device, 1 healthy: 0000:1b:00.4 Healthy (NUMA node 0)");
        assertThat(now.changesSince(now)).isEmpty();
    }

    @Test
    void healthChangesAndDevicesInAndOutAreSaidInWords() {
        KubeletView before = view(List.of(REGISTER), List.of(device("0000:1b:00.4", "Healthy"),
                device("0000:1b:00.5", "Healthy")), true);
        KubeletView unhealthy = view(List.of(REGISTER), List.of(device("0000:1b:00.4", "Unhealthy"),
                device("0000:1b:00.5", "Healthy")), true);
        assertThat(unhealthy.changesSince(before)).containsExactly(
                R + ": 0000:1b:00.4 is Unhealthy now (was Healthy); 2 devices, 1 healthy");
        KubeletView moved = view(List.of(REGISTER), List.of(device("0000:1b:00.5", "Healthy"),
                device("0000:1b:00.6", "Healthy")), true);
        assertThat(moved.changesSince(before)).containsExactly(
                R + ": new 0000:1b:00.6; gone 0000:1b:00.4; 2 devices, 2 healthy");
        assertThat(view(List.of(REGISTER), List.of(), false).changesSince(before)).containsExactly(
                R + ": an empty device list (the plugin retired the resource)", R + ": its ListAndWatch stream ended");
    }

    @Test
    void aStreamThatOpenedAndEndedBetweenTwoViewsIsStillSaidToHaveEnded() {
        KubeletView registered = view(List.of(REGISTER), null, false);
        KubeletView listedAndEnded = view(List.of(REGISTER), List.of(device("0000:1b:00.4", "Healthy")), false);
        assertThat(listedAndEnded.changesSince(registered)).containsExactly(
                R + ": 1 device, 1 healthy: 0000:1b:00.4 Healthy (NUMA node 0)", R + ": its ListAndWatch stream ended");
        assertThat(listedAndEnded.changesSince(listedAndEnded)).isEmpty();
    }

    @Test
    void aRestartedViewPrintsTheNextRegistrationAndListAsNew() {
        KubeletView before = view(List.of(REGISTER), List.of(device("0000:1b:00.4", "Healthy")), true);
        KubeletView after = view(List.of(REGISTER, REGISTER), List.of(device("0000:1b:00.4", "Healthy")), true);
        assertThat(after.changesSince(before.restarted())).hasSize(2).last().asString()
                .startsWith(R + ": 1 device, 1 healthy");
        assertThat(before.restarted().changesSince(before)).containsExactly(R + ": no device list any more",
                R + ": its ListAndWatch stream ended");
    }

    /** docs/RELIABILITY.md, "DRA mode": what a hostile plugin sends is printed escaped, on one line of bounded length. */
    @Test
    @Tag("reliability")
    void aHostilePluginsNamesIdsAndHealthArePrintedEscapedOnOneLineEach() {
        String hostile = "nvidia.com/\u001b[2J\u001b]0;pwned\u0007x\nforged line \u202e" + "y".repeat(5_000);
        Registration register = new Registration("v1beta1\u001b[31m", "evil\r.sock", hostile, false, false);
        KubeletView now = new KubeletView(List.of(register), Map.of(hostile, List.of(new DeviceState(
                "0000:1b:00.4\nforged", "Healthy\u202e", OptionalInt.empty()))), Set.of(hostile));

        List<String> lines = now.changesSince(KubeletView.empty());

        assertThat(lines).hasSize(2).allSatisfy(line -> {
            assertThat(line.codePoints().filter(c -> Character.isISOControl(c)
                    || Character.getType(c) == Character.FORMAT)).isEmpty();
            assertThat(line.length()).isLessThan(1_000);
        });
        assertThat(lines.get(0)).contains("\\u001b[2J", "\\n", "\\u202e");
    }
}
