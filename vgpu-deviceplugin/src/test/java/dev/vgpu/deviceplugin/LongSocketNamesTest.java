package dev.vgpu.deviceplugin;

import static dev.vgpu.deviceplugin.Fixtures.identified;
import static dev.vgpu.deviceplugin.Fixtures.snapshot;
import static dev.vgpu.deviceplugin.Fixtures.vf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Attachment;
import dev.vgpu.core.Device;
import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.standin.Registration;
import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plugin sockets in device-plugin directories whose paths leave little room (docs/HOST-FACTS.md §2.4): a long name
 * gets a cut socket name that the kubelet registers and dials, and a directory that leaves room for no socket
 * name fails that resource alone, saying why.
 */
class LongSocketNamesTest {

    private static final ResourceName LONG = new ResourceName(
            "NVIDIA_H200X-1-18C_WITH_A_PROFILE_NAME_THAT_IS_SIXTY-THREE_CHRS");
    private static final ResourceName NUMERIC = new ResourceName("2331");
    private static final String PF = "0000:1b:00.0";
    private static final String VF = "0000:1b:00.4";

    @TempDir
    Path tmp;

    @Test
    void aLongNameIsServedOnACutSocketThatTheKubeletRegistersAndDials() throws IOException {
        Path dir = Files.createDirectories(directoryOfBytes(60));
        try (Harness h = Harness.in(tmp, dir)) {
            h.host.sriovCard(PF, 0x2335).numa(0).virtualFunctions(1, 100).catalog(Map.of(1414L, "X")).create();
            h.host.configureVf(VF, 1414).addGroupNode(100);
            h.apply(snapshot(identified(vf(LONG, VF, PF, 100, 0), "vgpu-type:1414")));

            h.await(k -> k.streaming(LONG.fullName()));

            Registration registration = h.kubelet.registrations().get(0);
            assertThat(registration.resourceName()).isEqualTo(LONG.fullName());
            assertThat(registration.endpoint()).isNotEqualTo(LONG.socketFileName())
                    .matches("kubevirt-NVIDIA_H200X-1-18C_[A-Z_-]*[A-Z]-[0-9a-f]{8}\\.sock");
            Path socket = dir.resolve(registration.endpoint());
            assertThat(socket.toString().getBytes(StandardCharsets.UTF_8)).hasSize(107);
            assertThat(h.manager.socket(LONG)).contains(socket);
            assertThat(socket).exists();
            assertThat(h.kubelet.resources().get(LONG.fullName())).extracting(d -> d.id()).containsExactly(VF);
            assertThat(h.kubelet.allocation(LONG.fullName(), List.of(VF)).envs())
                    .containsEntry(LONG.envVar(Attachment.VFIO_PCI), VF);
        }
    }

    @Test
    void aDirectoryWithNoRoomForALongNameFailsThatResourceOnceAndServesTheOthers() throws IOException {
        // 86 bytes leave 20 for a file name: kubevirt-2331.sock (18) fits, the shortest cut name (22) does not.
        Path dir = Files.createDirectories(directoryOfBytes(86));
        String log;
        try (Harness h = Harness.in(tmp, dir)) {
            h.host.addGroupNode(41).addGroupNode(100);
            Device whole = Device.builder("0000:41:00.0", NUMERIC, "passthrough", Attachment.VFIO_PCI)
                    .iommuGroup("41").numaNode(0).build();
            log = CapturedStderr.of(() -> {
                h.apply(snapshot(whole, vf(LONG, VF, PF, 100, 0)));
                h.await(k -> k.streaming(NUMERIC.fullName()));
                // A few more check rounds, which retry serving a plugin without a server.
                int rounds = h.kubelet.listUpdates(NUMERIC.fullName());
                h.host.removeGroupNode(41);
                h.await(k -> k.listUpdates(NUMERIC.fullName()) > rounds);
            });

            assertThat(h.manager.socket(LONG)).isEmpty();
            assertThat(h.manager.status()).filteredOn(s -> s.name().equals(LONG)).singleElement()
                    .satisfies(s -> {
                        assertThat(s.serving()).isFalse();
                        assertThat(s.registered()).isFalse();
                    });
            assertThat(h.manager.running()).contains(LONG, NUMERIC);
            assertThat(h.kubelet.registrations()).extracting(Registration::resourceName)
                    .containsExactly(NUMERIC.fullName());
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()))
                        .containsExactlyInAnyOrder("kubelet.sock", "kubevirt-2331.sock");
            }
        }
        String expected = "Cannot serve " + LONG.fullName() + ": the device-plugin directory " + dir + " takes 86 of "
                + "the 107 bytes a unix socket path may have, which leaves 20 for the socket file name, less than the "
                + "22 of the shortest (kubevirt-<hash>.sock); this resource is not advertised";
        assertThat(log.split(java.util.regex.Pattern.quote(expected), -1)).as(log).hasSize(2);
        assertThat(log).doesNotContain("Cannot serve " + LONG.fullName() + " on");
    }

    /** A directory under the test's temporary directory whose path has exactly {@code bytes} bytes. */
    private Path directoryOfBytes(int bytes) {
        int padding = bytes - tmp.toString().length() - 1;
        assertThat(padding).as("the temporary directory %s is too long for a %d-byte path", tmp, bytes).isPositive();
        Path dir = tmp.resolve("p".repeat(padding));
        assertThat(dir.toString().getBytes(StandardCharsets.UTF_8)).hasSize(bytes);
        return dir;
    }
}
