package dev.vgpu.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Driver names are DNS subdomains of at most 63 characters (docs/DRA.md §1). */
class DriverNameTest {

    @ParameterizedTest
    @ValueSource(strings = {"gpu.vgpu.dev", "a", "vgpu-1.example.com", "a1.example.com"})
    void dnsSubdomainsAreDriverNames(String name) {
        assertThat(new DriverName(name).value()).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "GPU.vgpu.dev", "gpu..dev", "-gpu.dev", "gpu.dev-", "gpu/vgpu", "gpu_vgpu.dev",
            "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g"})
    void anythingElseIsRefusedNamingTheRule(String name) {
        assertThatThrownBy(() -> new DriverName(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("DRA driver name");
    }

    /** Valid for Kubernetes, but every CDI spec of such a driver would be refused by the container runtime. */
    @ParameterizedTest
    @ValueSource(strings = {"1gpu.example.com", "9", "0-vgpu.dev"})
    void aNameWhoseFirstCharacterIsNotALetterIsRefusedNamingTheCdiRule(String name) {
        assertThatThrownBy(() -> new DriverName(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("CDI vendor starts with a letter");
    }

    @Test
    void sixtyThreeCharactersAreTheMost() {
        assertThat(new DriverName("a".repeat(63)).value()).hasSize(63);
        assertThatThrownBy(() -> new DriverName("a".repeat(64))).hasMessageContaining("1-63");
    }
}
