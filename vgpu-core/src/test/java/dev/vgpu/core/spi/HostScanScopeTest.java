package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.core.PciIds;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.hostfiles.ScanScope;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A host tied to a scan shares that scan's scope with every copy; a host tied to none shares nothing. */
class HostScanScopeTest {

    record Key(int n) {
    }

    record Answer(String text) {
    }

    @Test
    void everyScanGetsAFreshScopeWhileOneScanSharesIts() {
        Host base = Host.of(Path.of("/host")).withPciIds(PciIds.empty());
        AtomicInteger reads = new AtomicInteger();

        Host scan1 = base.forScan();
        Answer inScan1 = scan1.scanScope().computeIfAbsent(new Key(1),
                k -> new Answer("read " + reads.incrementAndGet()));
        Answer alsoInScan1 = scan1.withPciIds(PciIds.empty()).withVgpuTypes(VgpuTypeResolver.none()).scanScope()
                .computeIfAbsent(new Key(1), k -> new Answer("read " + reads.incrementAndGet()));
        Host scan2 = base.forScan();
        Answer inScan2 = scan2.scanScope().computeIfAbsent(new Key(1),
                k -> new Answer("read " + reads.incrementAndGet()));

        assertThat(alsoInScan1).isSameAs(inScan1).isEqualTo(new Answer("read 1"));
        assertThat(inScan2).isEqualTo(new Answer("read 2"));
        assertThat(scan2.scanScope()).isNotSameAs(scan1.scanScope());
        assertThat(base.scanScope()).isSameAs(ScanScope.none());
    }

    @Test
    void hostsMadeWithoutAScanShareNothing() {
        Path root = Path.of("/host");
        VgpuTypeResolver resolver = VgpuTypeResolver.none();

        assertThat(Host.of(root).scanScope()).isSameAs(ScanScope.none());
        assertThat(new Host(root, HostFiles.nio(), PciIds.empty(), resolver).scanScope()).isSameAs(ScanScope.none());
        Host forScan = new Host(root, HostFiles.nio(), PciIds.empty(), resolver).forScan();
        assertThat(forScan.root()).isEqualTo(root);
        assertThat(forScan.vgpuTypes()).isSameAs(resolver);
        assertThat(forScan.withScanScope(ScanScope.none()).scanScope()).isSameAs(ScanScope.none());
        assertThatThrownBy(() -> Host.of(root).withScanScope(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("scanScope");
    }
}
