package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.Discovery;
import dev.vgpu.core.spi.Host;
import dev.vgpu.hostfiles.HostFiles;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testsupport.CapturedStderr;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rescan logs a skip at WARN only when the source instance's previous completed scan did not skip the same id for
 * the same reason, and the summary of unlisted skips only when its text changed; the discoveries never depend on
 * it. The log is what slf4j-simple writes to {@code System.err} (INFO and above).
 */
class SkipLogTest extends SourceTestBase {

    static final String CARD = "0000:1b:00.0";
    static final String VF = "0000:1b:00.4";

    @Override
    Path newRoot() {
        return jimfsRoot();
    }

    /** A full card: empty catalogs and no resolver, so every configured VF is a skip (its name is unknown). */
    void fullCard(int vfs, int configured) {
        tree.sriovCard(CARD, 0x26b9).virtualFunctions(vfs, 100).catalog(Map.of()).create();
        for (int i = 0; i < configured; i++) {
            tree.configureVf(SysfsTree.vfAddress(CARD, i), 1152);
        }
    }

    /** One scan's discovery and what it logged. */
    record Logged(Discovery found, String log) {
        List<String> warns() {
            return log.lines().filter(line -> line.contains(" WARN ")).toList();
        }

        List<String> warnsAbout(String text) {
            return warns().stream().filter(line -> line.contains(text)).toList();
        }
    }

    Logged scanLogged(DeviceSource source) {
        CapturedStderr.Outcome<Discovery> outcome = CapturedStderr.withAnswer(() -> scan(source));
        return new Logged(outcome.answer(), outcome.log());
    }

    @Test
    void anUnchangedSkipIsAWarnAtTheFirstScanOnlyAndBothDiscoveriesListIt() {
        fullCard(2, 1);
        VendorVfioSource source = new VendorVfioSource();

        Logged first = scanLogged(source);
        Logged second = scanLogged(source);

        assertThat(first.warnsAbout("vendor-vfio: skipping " + VF + ": ")).singleElement().asString()
                .contains("is configured with vGPU type 1152");
        assertThat(second.warns()).isEmpty();
        assertThat(skips(first.found())).containsOnlyKeys(VF);
        assertThat(second.found()).isEqualTo(first.found());
    }

    @Test
    void anUnchangedSkipOfPassthroughOrMdevIsAWarnAtTheFirstScanOnly() {
        tree.passthroughGpu("0000:41:00.0", 0x2335).iommuGroup(41).create();
        tree.symlink("sys/bus/pci/devices/0000:41:00.0/iommu_group", "../../../../kernel/iommu_groups/abc");
        tree.nvidiaGpu("0000:06:00.0", 0x2236).create();
        tree.mdev(PassthroughAndMdevContract.UUID1, "0000:06:00.0", "nvidia-558", "NVIDIA A10-8Q", 7);
        tree.writeFile("sys/bus/pci/devices/0000:06:00.0/mdev_supported_types/nvidia-558/name", "!!!\n");

        for (DeviceSource source : List.<DeviceSource>of(new PassthroughSource(), new MdevSource())) {
            Logged first = scanLogged(source);
            Logged second = scanLogged(source);

            assertThat(first.warnsAbout(source.name() + ": skipping ")).as(source.name()).hasSize(1);
            assertThat(second.warns()).as(source.name()).isEmpty();
            assertThat(second.found()).as(source.name()).isEqualTo(first.found());
            assertThat(first.found().skipped()).as(source.name()).hasSize(1);
        }
    }

    @Test
    void anotherReasonIsAWarnAgain() {
        fullCard(2, 1);
        VendorVfioSource source = new VendorVfioSource();
        scanLogged(source);

        tree.configureVf(VF, 1155);
        Logged changed = scanLogged(source);

        assertThat(changed.warnsAbout("vendor-vfio: skipping " + VF + ": ")).singleElement().asString()
                .contains("is configured with vGPU type 1155");
        assertThat(scanLogged(source).warns()).isEmpty();
    }

    @Test
    void aSkipThatGoesForOneScanAndComesBackIsAWarnAgain() {
        fullCard(2, 1);
        VendorVfioSource source = new VendorVfioSource();
        assertThat(scanLogged(source).warnsAbout("skipping " + VF)).hasSize(1);

        tree.unconfigureVf(VF);
        Logged gone = scanLogged(source);
        assertThat(gone.found().skipped()).isEmpty();
        assertThat(gone.warns()).isEmpty();

        tree.configureVf(VF, 1152);
        assertThat(scanLogged(source).warnsAbout("skipping " + VF)).hasSize(1);
    }

    @Test
    void aNewSourceInstanceWarnsAgain() {
        fullCard(2, 1);
        VendorVfioSource first = new VendorVfioSource();
        scanLogged(first);
        assertThat(scanLogged(first).warns()).isEmpty();

        assertThat(scanLogged(new VendorVfioSource()).warnsAbout("skipping " + VF)).hasSize(1);
    }

    @Test
    void theSummaryOfUnlistedSkipsIsAWarnWhenItsTextChangesOnly() {
        fullCard(130, 110);
        VendorVfioSource source = new VendorVfioSource();

        Logged first = scanLogged(source);
        assertThat(first.warnsAbout("vendor-vfio: skipping ")).hasSize(Discovery.LISTED_SKIPS);
        assertThat(first.warnsAbout("more devices skipped than listed")).singleElement().asString()
                .contains("vendor-vfio: 10 more devices skipped than listed");

        Logged second = scanLogged(source);
        assertThat(second.warns()).isEmpty();
        assertThat(second.found()).isEqualTo(first.found());
        assertThat(second.found().unlistedSkips()).isEqualTo(10);

        for (int i = 110; i < 115; i++) {
            tree.configureVf(SysfsTree.vfAddress(CARD, i), 1152);
        }
        Logged more = scanLogged(source);
        assertThat(more.warnsAbout("more devices skipped than listed")).singleElement().asString()
                .contains("vendor-vfio: 15 more devices skipped than listed");
        assertThat(more.found().unlistedSkips()).isEqualTo(15);
        assertThat(scanLogged(source).warns()).isEmpty();
    }

    @Test
    void manyThreadsScanningWithOneSourceThrowNothingAndAgree() throws Exception {
        fullCard(104, 104);
        VendorVfioSource source = new VendorVfioSource();
        Discovery expected = scan(new VendorVfioSource(), host());
        int threads = 8;
        int iterations = 100;
        ConcurrentLinkedQueue<Discovery> found = new ConcurrentLinkedQueue<>();
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        String log;
        try {
            log = CapturedStderr.of(() -> {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    done.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < iterations; i++) {
                            found.add(scan(source));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    try {
                        f.get(60, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
            });
        } finally {
            pool.shutdownNow();
        }

        assertThat(found).hasSize(threads * iterations).allSatisfy(d -> assertThat(d).isEqualTo(expected));
        assertThat(log).doesNotContain("Exception").doesNotContain("ERROR");
        // Every scan has the same WARN-eligible skips (the first 100 in directory order), and only scans that
        // started before the first one completed may log them at WARN: at most one scan per thread.
        assertThat(log.lines().filter(line -> line.contains(" WARN ") && line.contains("vendor-vfio: skipping ")))
                .hasSizeBetween(Discovery.LISTED_SKIPS, threads * Discovery.LISTED_SKIPS);
        assertThat(log.lines().filter(line -> line.contains(" WARN ") && line.contains("more devices skipped")))
                .hasSizeBetween(1, threads);
    }

    // ---- the scans' overlap, step by step -------------------------------------------------------------------

    private static final Logger LOG = LoggerFactory.getLogger(SkipLogTest.class);
    private static final Path HOST = Path.of("/host");

    /** A host at {@code root}: the skip log remembers scans by their root. */
    private static Host hostAt(Path root) {
        return Host.of(root, HostFiles.nio());
    }

    static long warns(String log, String id) {
        return log.lines().filter(line -> line.contains(" WARN ") && line.contains("test: skipping " + id + ":"))
                .count();
    }

    @Test
    void aFirstAppearanceIsAWarnEvenWhenAnOverlappingScanFinishedMeanwhile() {
        SkipLog skipLog = new SkipLog();

        String log = CapturedStderr.of(() -> {
            Scan slow = new Scan("test", LOG, skipLog, hostAt(HOST));
            Scan fast = new Scan("test", LOG, skipLog, hostAt(HOST));
            fast.skip("x", "reason x");
            fast.skip("y", "reason y");
            fast.done();
            // slow started before fast completed: to slow, x and z are new
            slow.skip("x", "reason x");
            slow.skip("z", "reason z");
            slow.done();
        });
        assertThat(warns(log, "x")).isEqualTo(2);
        assertThat(warns(log, "y")).isEqualTo(1);
        assertThat(warns(log, "z")).isEqualTo(1);

        // The last scan to complete (slow: x, z) is what the next one compares with.
        String next = CapturedStderr.of(() -> {
            Scan scan = new Scan("test", LOG, skipLog, hostAt(HOST));
            scan.skip("x", "reason x");
            scan.skip("y", "reason y");
            scan.skip("z", "reason z");
            scan.done();
        });
        assertThat(warns(next, "x")).isZero();
        assertThat(warns(next, "y")).as("a repeat may be a WARN again").isEqualTo(1);
        assertThat(warns(next, "z")).isZero();
    }

    @Test
    void aScanOfAnotherHostRootLogsItsSkipsAsNew() {
        SkipLog skipLog = new SkipLog();
        Path other = Path.of("/other-host");

        String log = CapturedStderr.of(() -> {
            for (Path root : List.of(HOST, other, other, HOST)) {
                Scan scan = new Scan("test", LOG, skipLog, hostAt(root));
                scan.skip("x", "reason x");
                scan.done();
            }
        });

        // HOST: new; other: new (another root); other: a repeat; HOST: new again (the last scan was of other)
        assertThat(warns(log, "x")).isEqualTo(3);
        assertThat(skipLog.last(other)).isEqualTo(SkipLog.Last.NONE);
        assertThat(skipLog.last(HOST).skips()).containsExactly(new SkipLog.Key("x", "reason x"));
    }

    @Test
    void aScanThatNeverCompletesPublishesNothing() {
        SkipLog skipLog = new SkipLog();

        String log = CapturedStderr.of(() -> {
            Scan failed = new Scan("test", LOG, skipLog, hostAt(HOST));
            failed.skip("x", "reason x");
            Scan next = new Scan("test", LOG, skipLog, hostAt(HOST));
            next.skip("x", "reason x");
            next.done();
        });

        assertThat(warns(log, "x")).isEqualTo(2);
        assertThat(skipLog.last(HOST).skips()).containsExactly(new SkipLog.Key("x", "reason x"));
    }

    @Test
    void onlyTheWarnEligibleSkipsAreRememberedAndRepeatsCountTowardsThem() {
        SkipLog skipLog = new SkipLog();
        String log = CapturedStderr.of(() -> {
            for (int round = 0; round < 2; round++) {
                Scan scan = new Scan("test", LOG, skipLog, hostAt(HOST));
                for (int i = 0; i < Discovery.LISTED_SKIPS + 50; i++) {
                    scan.skip("d" + i, "reason");
                }
                scan.done();
            }
        });

        assertThat(skipLog.last(HOST).skips()).hasSize(Discovery.LISTED_SKIPS)
                .contains(new SkipLog.Key("d0", "reason"), new SkipLog.Key("d99", "reason"))
                .doesNotContain(new SkipLog.Key("d100", "reason"));
        assertThat(log.lines().filter(line -> line.contains(" WARN ") && line.contains("test: skipping ")))
                .hasSize(Discovery.LISTED_SKIPS);
        assertThat(log.lines().filter(line -> line.contains(" WARN ") && line.contains("more devices skipped")))
                .hasSize(1);
    }
}
