package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.ScanScope;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The sources of one scan share their common reads (the bus listing through the host's scan scope, each listed
 * function's driver link and vendor in its entry: read once for passthrough, vendor-vfio, the IOMMU group checks and
 * the mdev parents together, failures included), and the next scan, with a fresh scope, reads everything again.
 */
class ScanScopeSharingTest extends SourceTestBase {

    static final String VF = "0000:1b:00.4";
    static final String NIC = "0000:03:00.0";

    @Override
    Path newRoot() {
        return jimfsRoot();
    }

    /** A scan scope that counts, per key, how often it was asked and how often the value was computed (read). */
    static final class CountingScope implements ScanScope {
        final ScanScope delegate = ScanScope.fresh();
        final Map<Object, AtomicInteger> asked = new ConcurrentHashMap<>();
        final Map<Object, AtomicInteger> computed = new ConcurrentHashMap<>();

        @Override
        public <K, V> V computeIfAbsent(K key, Function<? super K, ? extends V> compute) {
            asked.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            return delegate.computeIfAbsent(key, k -> {
                computed.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
                return compute.apply(k);
            });
        }

        /** Key → count, for the keys of one type. */
        static Map<Object, Integer> ofType(Map<Object, AtomicInteger> counts, Class<?> keyType) {
            Map<Object, Integer> selected = new ConcurrentHashMap<>();
            counts.forEach((key, count) -> {
                if (keyType.isInstance(key)) {
                    selected.put(key, count.get());
                }
            });
            return selected;
        }
    }

    /** Passthrough GPUs, an SR-IOV card with a configured VF, mdevs, NICs, an unbound function. */
    void mixedHost() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).numa(0).vfioCdev("vfio3").create();
        tree.function("0000:41:00.1", 0x10de, 0x22e8).pciClass(0x040300).driver("vfio-pci").iommuGroup(41).create();
        tree.function(NIC, 0x15b3, 0x101d).driver("mlx5_core").iommuGroup(3).numa(0).create();
        tree.function("0000:00:00.0", 0x1022, 0x14a4).create();
        tree.sriovCard("0000:1b:00.0", 0x2335).virtualFunctions(2, 100)
                .catalog(Map.of(1428L, "NVIDIA H200X-141C")).create();
        tree.configureVf(VF, 1428);
        tree.nvidiaGpu("0000:06:00.0", 0x2236).numa(1).create();
        tree.mdev("aa618089-8b16-4d01-a136-25a0f3c73123", "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
    }

    List<Path> pciFunctions() {
        List<Path> functions = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tree.path(PciBus.PCI_DEVICES))) {
            entries.forEach(functions::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return functions;
    }

    static List<Discovery> scanAll(Host host) {
        List<Discovery> found = new ArrayList<>();
        for (DeviceSource source : ALL) {
            found.add(scan(source, host));
        }
        return found;
    }

    @Test
    void oneScanListsTheBusOnceForBothPciSourcesAndKeepsNoScopeKeyPerFunction() {
        mixedHost();
        CountingScope scope = new CountingScope();

        List<Discovery> shared = scanAll(host().withScanScope(scope));

        assertThat(pciFunctions()).hasSize(8);
        assertThat(scope.computed.get(new PciBus.BusListing(tree.path(PciBus.PCI_DEVICES)))).hasValue(1);
        assertThat(scope.asked.get(new PciBus.BusListing(tree.path(PciBus.PCI_DEVICES)))).hasValue(2);
        // A listed function's driver and vendor live in its entry: the IOMMU group checks of 41:00.0 and 41:00.1 and
        // the mdev parent 06:00.0 are path asks of listed functions, answered from their entries too.
        assertThat(CountingScope.ofType(scope.asked, PciBus.DriverLink.class)).isEmpty();
        assertThat(CountingScope.ofType(scope.asked, PciBus.VendorId.class)).isEmpty();
        assertThat(shared).isEqualTo(scanAll(host()));
    }

    @Test
    void aPathAskAndAnEntryAskOfOneListedFunctionShareOneReadInEitherOrder() throws IOException {
        mixedHost();
        Path bus = tree.path(PciBus.PCI_DEVICES);
        String audio = "0000:41:00.1";
        Host scan = host().forScan();
        PciBus.Entry entry = PciBus.listPci(scan).stream().filter(e -> e.name().equals(audio)).findFirst()
                .orElseThrow();

        String byEntry = PciBus.driver(scan, entry);
        tree.bindDriver(audio, "snd_hda_intel");
        String byPath = PciBus.driver(scan, bus.resolve(audio));

        assertThat(byEntry).isEqualTo("vfio-pci");
        assertThat(byPath).isSameAs(byEntry);
        Host nextScan = host().forScan();
        PciBus.listPci(nextScan);
        String nextByPath = PciBus.driver(nextScan, bus.resolve(audio));
        tree.bindDriver(audio, "vfio-pci");
        PciBus.Entry nextEntry = PciBus.listPci(nextScan).stream().filter(e -> e.name().equals(audio)).findFirst()
                .orElseThrow();
        assertThat(nextByPath).isEqualTo("snd_hda_intel");
        assertThat(PciBus.driver(nextScan, nextEntry)).isSameAs(nextByPath);
        assertThat(PciBus.vendor(nextScan, bus.resolve(audio))).isSameAs(PciBus.vendor(nextScan, nextEntry));
    }

    @Test
    void aListingLargerThanAnyHostsIsNotIndexedAndItsPathAsksStillAnswer() throws IOException {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        for (int i = 0; i < PciBus.BusMemo.INDEX_LIMIT; i++) {
            tree.symlink(PciBus.PCI_DEVICES + String.format("/0001:%02x:%02x.%d", i >> 11, (i >> 3) & 0xff, i & 7),
                    "../../../devices/pci0000:00/gone");
        }
        CountingScope scope = new CountingScope();
        Host scan = host().withScanScope(scope);
        assertThat(PciBus.listPci(scan)).hasSize(PciBus.BusMemo.INDEX_LIMIT + 1);

        String byPath = PciBus.driver(scan, tree.path(PciBus.PCI_DEVICES).resolve("0000:41:00.0"));

        assertThat(byPath).isEqualTo("vfio-pci");
        assertThat(CountingScope.ofType(scope.computed, PciBus.DriverLink.class)).hasSize(1);
    }

    @Test
    void pathAsksBeforeAnyListingShareTheirReadThroughTheScope() throws IOException {
        mixedHost();
        Path bus = tree.path(PciBus.PCI_DEVICES);
        CountingScope scope = new CountingScope();
        Host scan = host().withScanScope(scope);

        String first = PciBus.driver(scan, bus.resolve(NIC));
        tree.bindDriver(NIC, "vfio-pci");
        String second = PciBus.driver(scan, bus.resolve(NIC));

        assertThat(first).isEqualTo("mlx5_core").isSameAs(second);
        assertThat(CountingScope.ofType(scope.computed, PciBus.DriverLink.class)).hasSize(1)
                .containsValue(1);
    }

    @Test
    void bothSourcesOfAScanSeeItsFirstAnswerAndTheNextScanReadsAfresh() {
        mixedHost();
        Host firstScan = host().forScan();
        assertThat(skips(scan(PASSTHROUGH, firstScan))).doesNotContainKey(VF);

        tree.bindDriver(VF, "vfio-pci");

        // the VF's driver link now says vfio-pci, but this scan already read it as nvidia
        assertThat(scan(VENDOR, firstScan).devices()).extracting(d -> d.id()).containsExactly(VF);
        Host nextScan = host().forScan();
        // a VF on vfio-pci is no whole GPU: passthrough sees it, and skips it
        assertThat(skips(scan(PASSTHROUGH, nextScan))).containsKey(VF);
        assertThat(scan(VENDOR, nextScan).devices()).isEmpty();
    }

    @Test
    void aFailedReadIsSharedWithinTheScanToo() {
        mixedHost();
        tree.bindDriver(NIC, null).writeAttribute(NIC, "driver", "mlx5_core\n");
        CountingScope scope = new CountingScope();
        Host firstScan = host().withScanScope(scope);

        String passthroughReason = skips(scan(PASSTHROUGH, firstScan)).get(NIC);
        tree.delete("sys/bus/pci/devices/" + NIC + "/driver").bindDriver(NIC, "mlx5_core");
        String vendorReason = skips(scan(VENDOR, firstScan)).get(NIC);

        assertThat(passthroughReason).contains(NIC, "cannot read its driver link", "driver is not a link");
        // the link is fixed between the two sources, yet vendor-vfio gets the failure passthrough got
        assertThat(vendorReason).isEqualTo(passthroughReason);
        assertThat(skips(scan(VENDOR, host().forScan()))).doesNotContainKey(NIC);
    }

    @Test
    void aHostTiedToNoScanReadsEveryTime() {
        mixedHost();
        Host unscoped = host();
        assertThat(unscoped.scanScope()).isSameAs(ScanScope.none());
        assertThat(skips(scan(PASSTHROUGH, unscoped))).doesNotContainKey(VF);

        tree.bindDriver(VF, "vfio-pci");

        assertThat(scan(VENDOR, unscoped).devices()).isEmpty();
        assertThat(skips(scan(PASSTHROUGH, unscoped))).containsKey(VF);
    }

    @Test
    void aScanKeepsOneCopyOfEachDriverNameAndTheNextScanItsOwn() throws IOException {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        tree.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).create();
        Path bus = tree.path(PciBus.PCI_DEVICES);
        Host scan = host().forScan();
        Host nextScan = host().forScan();

        String first = PciBus.driver(scan, bus.resolve("0000:41:00.0"));
        String second = PciBus.driver(scan, bus.resolve("0000:42:00.0"));
        String nextScans = PciBus.driver(nextScan, bus.resolve("0000:42:00.0"));

        assertThat(first).isEqualTo("vfio-pci").isSameAs(second);
        assertThat(nextScans).isEqualTo("vfio-pci").isNotSameAs(first); // no memory shared between scans
    }

    @Test
    void vanishedFunctionsShareOneFailurePerScanNamingNoFile() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        tree.passthroughGpu("0000:42:00.0", 0x2335).iommuGroup(42).create();
        tree.symlink(PciBus.PCI_DEVICES + "/0000:43:00.0", "../../../devices/pci0000:00/gone-1");
        tree.symlink(PciBus.PCI_DEVICES + "/0000:44:00.0", "../../../devices/pci0000:00/gone-2");
        Path bus = tree.path(PciBus.PCI_DEVICES);
        Host scan = host().forScan();

        Throwable first = catchThrowable(() -> PciBus.driver(scan, bus.resolve("0000:43:00.0")));
        Throwable second = catchThrowable(() -> PciBus.driver(scan, bus.resolve("0000:44:00.0")));
        Throwable nextScans = catchThrowable(() -> PciBus.driver(host().forScan(), bus.resolve("0000:44:00.0")));

        assertThat(first).isInstanceOf(java.nio.file.NoSuchFileException.class)
                .hasMessage("the function vanished or its bus link dangles").isSameAs(second);
        assertThat(first.getStackTrace()).isEmpty();
        assertThat(nextScans).hasMessage(first.getMessage()).isNotSameAs(first);
    }
}
