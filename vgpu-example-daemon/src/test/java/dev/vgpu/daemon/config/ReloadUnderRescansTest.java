package dev.vgpu.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.core.Plan;
import dev.vgpu.core.RescanLoop;
import dev.vgpu.core.Resource;
import dev.vgpu.core.ResourceName;
import dev.vgpu.core.Snapshot;
import dev.vgpu.core.spi.Scanner;
import dev.vgpu.deviceplugin.PluginManager;
import dev.vgpu.deviceplugin.ResourceStatus;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.testing.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGHUP reloads that rename a resource back and forth, racing periodic rescans every millisecond: every round the
 * plugin manager applies serves exactly one resource with all three GPUs (none lost, none twice, never under both
 * names), and the last file read is what is served in the end.
 *
 * <p>Threads: the storm thread stands for the signal handler (it only writes the file, then asks for a reload and a
 * rescan); the loop's thread reads the file and applies rounds, and checks each round inside the sink, where nothing
 * else changes the manager.
 */
class ReloadUnderRescansTest {

    private static final int RELOADS = 300;
    private static final List<String> GPUS = List.of("0000:41:00.0", "0000:42:00.0", "0000:43:00.0");
    private static final ResourceName PGPU = new ResourceName("pgpu");
    private static final ResourceName GPU = new ResourceName("gpu");

    @TempDir
    Path tmp;

    @Test
    void renamesRacingRescansNeverLoseNorDuplicateAResource() throws Exception {
        SysfsTree tree = SysfsTree.at(Files.createDirectories(tmp.resolve("host")));
        for (int i = 0; i < GPUS.size(); i++) {
            tree.passthroughGpu(GPUS.get(i), 0x2331).iommuGroup(41 + i).numa(0).create().addGroupNode(41 + i);
        }
        Path file = tmp.resolve("config.yaml");
        write(file, PGPU);
        LiveConfig live = new LiveConfig(Optional.of(file), "--config", ConfigParser.read(file));
        List<String> broken = new CopyOnWriteArrayList<>();
        AtomicInteger renames = new AtomicInteger();
        // Paces the storm by rounds (periodic ones count too), so that reloads keep landing between and during them.
        Semaphore roundsStarted = new Semaphore(0);
        Scanner scanner = new Scanner(tree.host(), List.of(new PassthroughSource()), live::rules);

        try (PluginManager plugins = PluginManager.builder().hostRoot(tree.root())
                .devicePluginDir(Files.createDirectories(tmp.resolve("dp"))).build()) {
            RescanLoop loop = new RescanLoop(scanner, (next, plan) -> {
                plugins.apply(next, plan);
                check(next, plan, plugins, broken, renames);
            }, Duration.ofMillis(1), Snapshot.empty(), dev.vgpu.core.ScanObserver.NONE, () -> {
                live.reloadIfRequested();
                roundsStarted.release();
            });
            try {
                loop.runNow();
                loop.start();
                java.util.concurrent.atomic.AtomicReference<Throwable> stormFailed =
                        new java.util.concurrent.atomic.AtomicReference<>();
                Thread storm = new Thread(() -> {
                    try {
                        for (int i = 0; i < RELOADS; i++) {
                            write(file, i % 2 == 0 ? GPU : PGPU);
                            live.requestReload();
                            loop.requestRescan();
                            if (!roundsStarted.tryAcquire(60, java.util.concurrent.TimeUnit.SECONDS)) {
                                throw new AssertionError("no round started within 60 s after reload " + i);
                            }
                        }
                    } catch (Throwable t) {
                        stormFailed.set(t);
                    }
                }, "sighup-storm");
                storm.start();
                storm.join();
                assertThat(stormFailed.get()).as("the reload storm ended early").isNull();
                write(file, GPU);
                live.requestReload();
                loop.runNow();
            } finally {
                loop.close();
            }
            assertThat(broken).as("rounds that lost or duplicated a resource").isEmpty();
            assertThat(renames.get()).as("rounds that renamed the resource").isPositive();
            assertThat(plugins.running()).containsExactly(GPU);
            assertThat(plugins.status()).extracting(ResourceStatus::healthy).containsExactly(GPUS.size());
        }
    }

    /** On the loop's thread, right after the manager applied the round. */
    private static void check(Snapshot next, Plan plan, PluginManager plugins, List<String> broken,
                              AtomicInteger renames) {
        Set<ResourceName> names = next.resources().keySet();
        if (names.size() != 1 || !(names.contains(PGPU) || names.contains(GPU))) {
            broken.add("snapshot serves " + names);
            return;
        }
        Resource only = next.resources().values().iterator().next();
        if (!only.ids().equals(Set.copyOf(GPUS))) {
            broken.add(only.name() + " has " + only.ids());
        }
        if (!plugins.running().equals(names)) {
            broken.add("manager runs " + plugins.running() + " for a snapshot of " + names);
        }
        if (plan.changes().stream().anyMatch(c -> c instanceof Plan.Remove)) {
            renames.incrementAndGet();
        }
    }

    /** Replaces the file at once, as a ConfigMap update does (a reader never sees half a file). */
    private static void write(Path file, ResourceName name) {
        try {
            Path next = Files.writeString(file.resolveSibling("config.next"), "version: v1\nresources: [{match:"
                    + " {source: passthrough}, name: " + name.fullName() + "}]\n");
            Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
