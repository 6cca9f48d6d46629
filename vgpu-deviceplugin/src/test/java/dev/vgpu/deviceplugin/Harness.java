package dev.vgpu.deviceplugin;

import dev.vgpu.core.Reconciler;
import dev.vgpu.core.Snapshot;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.sysfs.MdevSource;
import dev.vgpu.sysfs.PassthroughSource;
import dev.vgpu.sysfs.VendorVfioSource;
import dev.vgpu.testing.SysfsTree;
import dev.vgpu.testsupport.RecordingThreads;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Predicate;

/**
 * One test's world: a host tree under {@code <tmp>/host}, a device-plugin directory ({@code <tmp>/dp} unless
 * given) with a stand-in kubelet, and a plugin manager; {@link #apply} moves the manager to a new snapshot with the
 * plan the reconciler computes.
 */
final class Harness implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(20);

    final SysfsTree host;
    final Path pluginDir;
    StandInKubelet kubelet;
    final PluginManager manager;
    /** Every thread the manager starts (its own scheduler's, the transport's, the watch's). */
    final RecordingThreads threads = new RecordingThreads("harness");
    private Snapshot current = Snapshot.empty();

    private Harness(Path tmp, boolean startKubelet, Duration poll) {
        this(tmp, tmp.resolve("dp"), startKubelet, poll, null);
    }

    /** With {@code scheduler} null, the manager makes its own. */
    private Harness(Path tmp, Path pluginDir, boolean startKubelet, Duration poll, ScheduledExecutorService scheduler) {
        this.host = SysfsTree.at(tmp.resolve("host"));
        host.mkdirs("dev/vfio");
        this.pluginDir = pluginDir;
        this.kubelet = startKubelet ? StandInKubelet.start(pluginDir) : null;
        PluginManager.Builder builder = PluginManager.builder()
                .hostRoot(host.root())
                .devicePluginDir(pluginDir)
                .healthPollInterval(poll)
                .registrationBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .sources(List.of(new PassthroughSource(), new MdevSource(), new VendorVfioSource()))
                .threads(threads);
        this.manager = (scheduler == null ? builder : builder.scheduler(scheduler)).build();
    }

    /** With a kubelet and a 200 ms poll. */
    static Harness start(Path tmp) {
        return new Harness(tmp, true, Duration.ofMillis(200));
    }

    /** With a kubelet and a poll so rare that only the directory watch can notice changes. */
    static Harness watchOnly(Path tmp) {
        return new Harness(tmp, true, Duration.ofHours(1));
    }

    /** With a kubelet and a 200 ms poll, serving in {@code pluginDir} instead of {@code <tmp>/dp}. */
    static Harness in(Path tmp, Path pluginDir) {
        return new Harness(tmp, pluginDir, true, Duration.ofMillis(200), null);
    }

    /** Without a kubelet yet (see {@link #startKubelet()}). */
    static Harness withoutKubelet(Path tmp) {
        return new Harness(tmp, false, Duration.ofMillis(200));
    }

    /** Without a kubelet yet, the manager's context on {@code scheduler} (which the test owns and ends). */
    static Harness withoutKubelet(Path tmp, ScheduledExecutorService scheduler) {
        return new Harness(tmp, tmp.resolve("dp"), false, Duration.ofMillis(200), scheduler);
    }

    StandInKubelet startKubelet() {
        kubelet = StandInKubelet.start(pluginDir);
        return kubelet;
    }

    void apply(Snapshot next) {
        manager.apply(next, Reconciler.plan(current, next));
        current = next;
    }

    Snapshot current() {
        return current;
    }

    void await(Predicate<StandInKubelet> condition) {
        try {
            kubelet.await(WAIT, condition);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        manager.close();
        if (kubelet != null) {
            kubelet.close();
        }
    }
}
