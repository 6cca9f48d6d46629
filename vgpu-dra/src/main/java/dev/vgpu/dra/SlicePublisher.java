package dev.vgpu.dra;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Threads;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes this node's pool as {@code resource.k8s.io/v1} ResourceSlices (docs/DRA.md §4) and keeps it published.
 *
 * <p>Each {@link #publish(Snapshot) snapshot} and each {@link #health(Set) health} change makes the wanted pool
 * ({@link ResourceSlices}: sorted devices, at most 128 a slice, 64 when any is tainted; an unhealthy device carries
 * the {@code NoSchedule} taint {@code <driver>/unhealthy}). A round lists the node's slices of this driver, keeps
 * the ones that already hold a wanted part, rewrites or creates the others and deletes what is left, following the
 * Go helper's generation rules: the pool's generation starts at 1 and rises by one when a slice is added or removed
 * or more than one changes (then every slice is written at the new generation); one changed slice is updated at the
 * same generation; a pool deleted behind its back comes back one generation above the last it published. Slices are named by {@code generateName} {@code <node>-<driver>-}, carry {@code spec.nodeName},
 * the pool name = the node name, an owner reference to the Node (its UID read once with a GET) and the label
 * {@code <driver>/node=<node>} the publisher lists and watches them by. A watch and a periodic check recreate
 * slices deleted behind its back (the kubelet deletes them all when it starts). A taint keeps the {@code timeAdded}
 * it was first published with, across restarts of the daemon too; until the first {@link #health} call a device
 * whose published entry is tainted stays tainted.
 *
 * <p>Threads: every field below the configuration is owned by the publisher's one thread
 * ({@code vgpu-dra-slices}); {@link #publish}, {@link #health} and the watch's callbacks only post to it, so the
 * rescan loop never waits on the API server. A failed round is logged once per distinct failure (WARN), its recovery
 * once (INFO), and retried with backoff (1 s doubling to 60 s); snapshots arriving meanwhile wait for the retry.
 * {@link #status()} is the one value other threads read. {@link #close()} leaves the slices in place: the kubelet
 * deletes them when no plugin instance is connected.
 * <pre>{@code
 * SlicePublisher slices = SlicePublisher.builder(client, DriverName.DEFAULT, "node-a").start();
 * slices.publish(snapshot);
 * }</pre>
 */
public final class SlicePublisher implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SlicePublisher.class);
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(60);

    private final KubernetesClient client;
    private final DriverName driver;
    private final String node;
    private final ScheduledExecutorService thread;
    private final Clock clock;
    private final DraObserver observer;
    private final boolean watching;

    // Owned by `thread`.
    private Snapshot snapshot;
    private Set<String> unhealthy = Set.of();
    /**
     * Whether {@link #health} was called yet. Until then a device whose published entry carries the unhealthy taint
     * keeps it: a restarted daemon's first round must not untaint a faulty device for the moments before its first
     * health verdict (the scheduler could allocate it meanwhile).
     */
    private boolean healthHeard;
    private String nodeUid;
    /** The generation of the last successful round: a pool deleted behind our back comes back one above it. */
    private long lastGeneration;
    private String failure;
    private Duration backoff = FIRST_BACKOFF;
    private ScheduledFuture<?> retry;
    private Watch watch;
    /** Whether {@code watch} is open; written by the thread, read by any. */
    private volatile boolean watchOpen;
    /** Why the watch could not start, as last logged; null while it runs or was never refused. */
    private String watchFailure;
    private boolean closed;
    private final Map<String, String> taintedSince = new HashMap<>();

    private volatile Status status = new Status(0, 0, 0, null);

    private SlicePublisher(Builder b) {
        this.client = b.client;
        this.driver = b.driver;
        this.node = b.node;
        this.clock = b.clock;
        this.observer = b.observer;
        this.watching = b.watch;
        this.thread = Threads.owner(Threads.daemon("vgpu-dra-slices"));
        long every = b.checkEvery.toMillis();
        thread.scheduleWithFixedDelay(() -> check("the periodic check"), every, every, TimeUnit.MILLISECONDS);
    }

    /** Starts a publisher of {@code driver}'s pool on {@code node}. */
    public static Builder builder(KubernetesClient client, DriverName driver, String node) {
        return new Builder(client, driver, node);
    }

    /** Publishes the pool of {@code next} (from any thread; returns at once). */
    public void publish(Snapshot next) {
        post(() -> {
            snapshot = next;
            if (retry == null) {
                round("a new snapshot");
            }
        });
    }

    /** Taints exactly the devices with these ids as unhealthy from now on (from any thread; returns at once). */
    public void health(Set<String> unhealthyIds) {
        Set<String> copy = Set.copyOf(unhealthyIds);
        post(() -> {
            boolean first = !healthHeard;
            healthHeard = true;
            if (first || !copy.equals(unhealthy)) {
                unhealthy = copy;
                if (retry == null) {
                    round("a health change");
                }
            }
        });
    }

    /**
     * Whether the watch of the node's slices is open now, so that a slice deleted behind the publisher's back comes
     * back at once; false before the first successful round, while the API server refuses the watch (the periodic
     * check recreates deleted slices then), and when the builder turned it off. Any thread.
     */
    public boolean watchOpen() {
        return watchOpen;
    }

    /** What the last round achieved. */
    public Status status() {
        return status;
    }

    /**
     * What the publisher last achieved.
     *
     * @param slices     slices published in the last successful round
     * @param generation their pool generation (0 before the first success)
     * @param devices    devices in them
     * @param failure    why the last round failed, in words; null when it succeeded
     */
    public record Status(int slices, long generation, int devices, String failure) {
    }

    private void post(Runnable task) {
        try {
            thread.execute(() -> {
                if (!closed) {
                    task.run();
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("slice publisher closed, dropping an update");
        }
    }

    private void round(String why) {
        if (snapshot == null || closed) {
            return;
        }
        if (retry != null) {
            retry.cancel(false);
            retry = null;
        }
        try {
            sync(why);
            if (failure != null) {
                LOG.info("ResourceSlices of node {} published again after: {}", node, failure);
            }
            failure = null;
            backoff = FIRST_BACKOFF;
        } catch (RuntimeException e) {
            String text = ApiServer.describe(e);
            if (!text.equals(failure)) {
                LOG.warn("ResourceSlices of node {} not published ({}): {}; retrying with backoff up to {} s", node,
                        why, text, MAX_BACKOFF.toSeconds());
            } else {
                LOG.debug("ResourceSlices of node {} still not published: {}", node, text);
            }
            failure = text;
            Status last = status;
            status = new Status(last.slices(), last.generation(), last.devices(), text);
            Duration wait = backoff;
            backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
            retry = thread.schedule(() -> {
                retry = null;
                round("a retry");
            }, wait.toMillis(), TimeUnit.MILLISECONDS);
            return;
        }
        ensureWatch();
    }

    /**
     * A round that the periodic check or a deleted slice asks for; while a retry is pending it waits for that retry,
     * so the backoff holds during an outage.
     */
    private void check(String why) {
        if (retry == null) {
            round(why);
        }
    }

    /** One round against the API server; throws what the client throws. */
    private void sync(String why) {
        if (nodeUid == null) {
            Node found = client.nodes().withName(node).get();
            if (found == null || found.getMetadata() == null || found.getMetadata().getUid() == null) {
                throw new IllegalStateException("node " + node + " does not exist in the API server");
            }
            nodeUid = found.getMetadata().getUid();
        }
        List<ResourceSlice> existing = new ArrayList<>(listOurs());
        // Before the first health verdict the published taints stand (read once per round, for both uses).
        Map<String, String> published = healthHeard ? Map.of() : publishedTaints(existing);
        Set<String> tainting = healthHeard ? unhealthy : idsNamed(published.keySet());
        List<List<SliceDevice>> wanted = ResourceSlices.devices(driver, snapshot, tainting);
        updateTaintTimes(wanted, published);
        existing.sort(Comparator.comparing(s -> s.getMetadata().getName()));
        long generation = Math.max(lastGeneration,
                existing.stream().mapToLong(SliceObjects::generation).max().orElse(0));

        // Pair each wanted part with a slice that already holds it, then reuse the rest, create, delete.
        ResourceSlice[] target = new ResourceSlice[wanted.size()];
        List<ResourceSlice> free = new ArrayList<>(existing);
        for (int i = 0; i < wanted.size(); i++) {
            for (ResourceSlice s : free) {
                if (wanted.get(i).equals(SliceObjects.devices(s)) && SliceObjects.ownedBy(s, nodeUid)) {
                    target[i] = s;
                    free.remove(s);
                    break;
                }
            }
        }
        int changed = 0;
        int created = 0;
        for (int i = 0; i < wanted.size(); i++) {
            if (target[i] == null) {
                changed++;
                if (!free.isEmpty()) {
                    target[i] = free.remove(0);
                } else {
                    created++;
                }
            }
        }
        List<ResourceSlice> obsolete = free;
        long known = generation;
        boolean mixed = existing.stream().anyMatch(s -> SliceObjects.generation(s) != known
                || SliceObjects.sliceCount(s) != wanted.size());
        boolean bump = generation == 0 || created > 0 || !obsolete.isEmpty() || changed > 1 || mixed;
        long next = bump ? generation + 1 : generation;

        int written = 0;
        for (int i = 0; i < wanted.size(); i++) {
            ResourceSlice base = target[i];
            boolean current = base != null && wanted.get(i).equals(SliceObjects.devices(base))
                    && SliceObjects.ownedBy(base, nodeUid) && SliceObjects.generation(base) == next
                    && SliceObjects.sliceCount(base) == wanted.size();
            if (current) {
                continue;
            }
            SliceSpec spec = new SliceSpec(driver, node, next, wanted.size(), node, wanted.get(i));
            ResourceSlice object = SliceObjects.toObject(spec, nodeUid, base, taintedSince::get);
            if (base == null) {
                client.resource(object).create();
            } else {
                client.resource(object).update();
            }
            written++;
        }
        for (ResourceSlice s : obsolete) {
            client.resources(ResourceSlice.class).withName(s.getMetadata().getName()).delete();
        }
        int devices = wanted.stream().mapToInt(List::size).sum();
        if (written > 0) {
            observer.slicesPublished(written);
        }
        if (written > 0 || !obsolete.isEmpty()) {
            LOG.info("Published {} ResourceSlice(s) of node {} at generation {} with {} device(s), {} unhealthy, after"
                    + " {}: {} created, {} updated, {} deleted", wanted.size(), node, next, devices,
                    tainting.size(), why, created, written - created, obsolete.size());
        }
        lastGeneration = next;
        status = new Status(wanted.size(), next, devices, null);
    }

    /** The device names whose published entries carry the unhealthy taint, each with its {@code timeAdded}. */
    private Map<String, String> publishedTaints(List<ResourceSlice> existing) {
        Map<String, String> times = new HashMap<>();
        String key = SliceTaint.unhealthy(driver).key();
        existing.forEach(slice -> SliceObjects.taintTimes(slice, key).forEach(times::putIfAbsent));
        return times;
    }

    /** The ids of the snapshot's devices with these names. */
    private Set<String> idsNamed(Set<String> names) {
        Set<String> ids = new HashSet<>();
        DeviceNames.index(snapshot).forEach((name, device) -> {
            if (names.contains(name)) {
                ids.add(device.id());
            }
        });
        return ids;
    }

    /**
     * Every wanted tainted device keeps the time its taint was first published; healthy ones lose it. Until the first
     * health verdict, a device this publisher has no time for takes the one its published slice carries
     * ({@code published}: a restarted daemon keeps the time the fault was first seen); after it ({@code published}
     * empty), a new taint is new (a device that recovered and faulted again while the write that untainted it failed
     * gets a new time), so it takes now.
     */
    private void updateTaintTimes(List<List<SliceDevice>> wanted, Map<String, String> published) {
        Set<String> tainted = new HashSet<>();
        wanted.forEach(part -> part.stream().filter(d -> !d.taints().isEmpty()).forEach(d -> tainted.add(d.name())));
        taintedSince.keySet().retainAll(tainted);
        published.forEach((name, time) -> {
            if (tainted.contains(name)) {
                taintedSince.putIfAbsent(name, time);
            }
        });
        String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
        tainted.forEach(name -> taintedSince.putIfAbsent(name, now));
    }

    private List<ResourceSlice> listOurs() {
        List<ResourceSlice> all = client.resources(ResourceSlice.class)
                .withLabel(SliceObjects.labelKey(driver), SliceObjects.labelValue(node)).list().getItems();
        // Driver and node again by hand: a slice someone else labelled must not be rewritten or deleted.
        return all.stream().filter(s -> s.getSpec() != null && driver.value().equals(s.getSpec().getDriver())
                && node.equals(s.getSpec().getNodeName())).toList();
    }

    /**
     * Watches the node's slices, so that one the kubelet deletes comes back at once. A watch that cannot start (no
     * {@code watch} permission, an API server that refuses it) is not a failed publish: the slices are published, the
     * periodic check still recreates deleted ones, and the next successful round tries the watch again.
     */
    private void ensureWatch() {
        if (watch != null || !watching) {
            return;
        }
        try {
            watch = startWatch();
            watchOpen = true;
            if (watchFailure != null) {
                LOG.info("Watching node {}'s ResourceSlices again", node);
                watchFailure = null;
            }
        } catch (RuntimeException e) {
            String text = ApiServer.describe(e);
            if (!text.equals(watchFailure)) {
                LOG.warn("Cannot watch node {}'s ResourceSlices ({}); the periodic check recreates deleted slices",
                        node, text);
            }
            watchFailure = text;
        }
    }

    private Watch startWatch() {
        return client.resources(ResourceSlice.class)
                .withLabel(SliceObjects.labelKey(driver), SliceObjects.labelValue(node)).watch(new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, ResourceSlice slice) {
                        // A fabric8 thread: only post.
                        if (action == Action.DELETED) {
                            String name = slice.getMetadata() == null ? "?" : slice.getMetadata().getName();
                            post(() -> check("slice " + name + " was deleted"));
                        }
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                        post(() -> {
                            LOG.debug("watch of node {}'s ResourceSlices ended: {}", node, cause.getMessage());
                            watch = null;
                            watchOpen = false;
                            check("the watch ended");
                        });
                    }
                });
    }

    /** Stops publishing; the slices stay. Waits up to 10 s for a round in progress. */
    @Override
    public void close() {
        post(() -> {
            closed = true;
            if (watch != null) {
                watch.close();
                watch = null;
                watchOpen = false;
            }
        });
        Threads.stop(thread, Duration.ofSeconds(10));
    }

    /** Configuration of a {@link SlicePublisher}; not thread-safe. */
    public static final class Builder {
        private final KubernetesClient client;
        private final DriverName driver;
        private final String node;
        private Duration checkEvery = Duration.ofSeconds(30);
        private Clock clock = Clock.systemUTC();
        private DraObserver observer = DraObserver.NONE;
        private boolean watch = true;

        private Builder(KubernetesClient client, DriverName driver, String node) {
            this.client = Objects.requireNonNull(client, "client");
            this.driver = Objects.requireNonNull(driver, "driver");
            this.node = Objects.requireNonNull(node, "node");
            if (node.isEmpty()) {
                throw new IllegalArgumentException("the node name is empty");
            }
        }

        /** How often the slices are compared with what should be there besides the watch (30 s). */
        public Builder checkEvery(Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("the check interval must be positive, got " + value);
            }
            checkEvery = value;
            return this;
        }

        /** The clock taints' {@code timeAdded} come from. */
        public Builder clock(Clock value) {
            clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /** Whether deleted slices are watched for (tests: off, so that only the periodic check recreates them). */
        Builder watch(boolean value) {
            watch = value;
            return this;
        }

        /** Hears how many slices each round wrote (metrics); {@link DraObserver#NONE} unless set. */
        public Builder observer(DraObserver value) {
            observer = Objects.requireNonNull(value, "observer");
            return this;
        }

        /** Starts the publisher's thread; nothing is published before the first {@link #publish}. */
        public SlicePublisher start() {
            return new SlicePublisher(this);
        }
    }
}
