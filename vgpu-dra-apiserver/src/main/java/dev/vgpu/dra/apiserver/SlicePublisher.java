package dev.vgpu.dra.apiserver;

import dev.vgpu.core.Snapshot;
import dev.vgpu.core.internal.Guarded;
import dev.vgpu.core.internal.Printable;
import dev.vgpu.core.internal.Threads;
import dev.vgpu.dra.DeviceNames;
import dev.vgpu.dra.DevicePool;
import dev.vgpu.dra.DraObserver;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.ResourceSlices;
import dev.vgpu.dra.SliceDevice;
import dev.vgpu.dra.SliceSpec;
import dev.vgpu.dra.SliceTaint;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceList;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes this node's pool as {@code resource.k8s.io/v1} ResourceSlices (docs/DRA.md §4) and keeps it published.
 *
 * <p>Each {@link #publish(DevicePool) pool} (the DRA plugin hands it over, devices and health, whenever either changes)
 * makes the wanted slices ({@link ResourceSlices}: sorted devices, at most 128 a slice, 64 when any is tainted; an
 * unhealthy device carries the {@code NoSchedule} taint {@code <driver>/unhealthy}). A round lists the node's slices of
 * this driver, keeps the ones that already hold a wanted part, rewrites or creates the others and deletes what is left,
 * following the Go helper's generation rules: the pool's generation starts at 1 and rises by one when a slice is
 * added or removed or more than one changes (then every slice is written at the new generation); one changed slice is
 * updated at the same generation; a pool deleted behind its back comes back one generation above the last it
 * published. Slices are named by {@code generateName} {@code <node>-<driver>-}, carry {@code spec.nodeName}, the pool
 * name = the node name, an owner reference to the Node (its UID read once) and the label {@code <driver>/node=<node>}
 * the publisher lists and watches them by. A taint keeps the {@code timeAdded} it was first published with, across
 * restarts of the daemon too; until the first health verdict a device whose published entry is tainted stays tainted.
 *
 * <p>Bounded against the API server (docs/RELIABILITY.md, "DRA mode"): every request through {@link ApiRequests}
 * (10 s, a list at most {@value #MAX_LIST_BYTES} bytes, a watch event at most {@value #MAX_EVENT_BYTES}); a failed
 * round is retried after 1 s doubling to 60 s, each wait jittered; a watch that ends (an {@code ERROR} 410, a
 * refusal, the server's timeout) is opened again after its own backoff, 1 s doubling to 60 s, jittered, so that a
 * server answering every watch with an error gets a few requests a minute, not a hundred a second; deletions the
 * watch reports are coalesced: however many arrive, one round runs for them, at most one a second. A periodic check
 * (30 s) recreates deleted slices while the watch is down.
 *
 * <p>Threads: every field below the configuration is owned by the publisher's one thread ({@code vgpu-dra-slices},
 * from the factory given), which makes every API call of the publisher; {@link #publish} and the watch's lines (on
 * the HTTP client's threads) only post to it. A failed round is logged once per distinct failure (WARN), its recovery
 * once (INFO). {@link #status()} is the one value other threads read. {@link #close()} leaves the slices in place:
 * the kubelet deletes them when no plugin instance is connected.
 * <pre>{@code
 * SlicePublisher slices = SlicePublisher.builder(api, DriverName.DEFAULT, "node-a").start();
 * DraPlugin plugin = DraPlugin.builder(handovers, reader)...devicePool(slices::publish).start();
 * }</pre>
 */
public final class SlicePublisher implements AutoCloseable {

    /** The largest list of the node's slices read: 1,100 devices take about 1.5 MB. */
    static final int MAX_LIST_BYTES = 4 << 20;
    /** The largest watch event read: one slice of 128 devices takes about 200 KB. */
    static final int MAX_EVENT_BYTES = 1 << 20;
    /** The largest answer to any other request (the Node, a written slice). */
    static final int MAX_ANSWER_BYTES = 4 << 20;
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(60);
    /** The least time between two rounds the watch asks for. */
    static final Duration EVENT_ROUND_SPACING = Duration.ofSeconds(1);
    /** How long the server keeps a watch open before it ends it (a new one is opened then). */
    static final Duration WATCH_TIMEOUT = Duration.ofMinutes(5);

    private static final Logger LOG = LoggerFactory.getLogger(SlicePublisher.class);
    private static final String SLICES = "/apis/resource.k8s.io/v1/resourceslices";

    private final ApiServer api;
    private final DriverName driver;
    private final String node;
    private final ScheduledExecutorService thread;
    private final boolean ownThread;
    private final Clock clock;
    private final DoubleSupplier jitter;
    private final DraObserver observer;
    private final boolean watching;
    private final String selector;
    private final AtomicReference<String> fatal = new AtomicReference<>();
    /** Whether a round for watch events is waiting to run; set by the HTTP threads, cleared by the thread. */
    private final AtomicBoolean eventRoundPending = new AtomicBoolean();
    /** Watch events read, of every watch (tests: a flood was read whole). */
    private final java.util.concurrent.atomic.AtomicLong eventsRead = new java.util.concurrent.atomic.AtomicLong();

    // Owned by `thread`.
    private DevicePool pool;
    private String nodeUid;
    /** The generation of the last successful round: a pool deleted behind our back comes back one above it. */
    private long lastGeneration;
    /** The resourceVersion of the last list, where a watch starts. */
    private String listedVersion;
    private String failure;
    private Duration backoff = FIRST_BACKOFF;
    private ScheduledFuture<?> retry;
    /** The open watch; null while none is open or being opened. */
    private OpenWatch watch;
    private Duration watchBackoff = FIRST_BACKOFF;
    private ScheduledFuture<?> watchRestart;
    private String watchFailure;
    private boolean closed;
    private final Map<String, String> taintedSince = new HashMap<>();
    /**
     * What the server stored for a part it was sent, where the two differ (it dropped fields it does not serve):
     * such a stored slice counts as holding that part, so the same part is not sent again. Only parts wanted now.
     */
    private final Map<List<SliceDevice>, List<SliceDevice>> storedAs = new HashMap<>();
    /** The dropped-field descriptions already warned of (one WARN each per process). */
    private final Set<String> droppedWarned = new HashSet<>();
    /** The attribute values left out as too long, as warned of; only those of the current pool. */
    private final Set<ResourceSlices.Omission> omissionsWarned = new HashSet<>();

    private volatile boolean watchOpen;
    private volatile Status status = new Status(0, 0, 0, null);

    private SlicePublisher(Builder b) {
        this.api = b.api;
        this.driver = b.driver;
        this.node = b.node;
        this.clock = b.clock;
        this.jitter = b.jitter;
        this.observer = b.observer;
        this.watching = b.watch;
        this.selector = "labelSelector=" + URLEncoder.encode(SliceObjects.labelKey(driver) + "="
                + SliceObjects.labelValue(node), StandardCharsets.UTF_8);
        this.ownThread = b.scheduler == null;
        this.thread = ownThread ? Threads.owner(named(b.threads)) : b.scheduler;
        long every = b.checkEvery.toMillis();
        thread.scheduleWithFixedDelay(task(() -> check("the periodic check")), every, every, TimeUnit.MILLISECONDS);
    }

    /** Starts a publisher of {@code driver}'s pool on {@code node}. */
    public static Builder builder(ApiServer api, DriverName driver, String node) {
        return new Builder(api, driver, node);
    }

    /**
     * Publishes {@code next}: its devices, each unhealthy one tainted; before its first health verdict the taints
     * already published stand. Any thread; returns at once.
     */
    public void publish(DevicePool next) {
        Objects.requireNonNull(next, "next");
        post(() -> {
            pool = next;
            if (retry == null) {
                round("a new device pool");
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

    /** What the last round achieved. Any thread. */
    public Status status() {
        return status;
    }

    /**
     * Why the publisher cannot be trusted to go on, if it cannot: a JVM error on its thread. Once set it stays; a
     * liveness probe should fail on it. Any thread.
     */
    public Optional<String> failure() {
        return Optional.ofNullable(fatal.get());
    }

    /** How many watch events were read so far, of every watch (tests). */
    long eventsRead() {
        return eventsRead.get();
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

    private Runnable task(Runnable body) {
        return Guarded.task("ResourceSlice publisher", () -> {
            if (!closed) {
                body.run();
            }
        }, e -> fatal.compareAndSet(null, "a JVM error on the ResourceSlice publisher's thread: " + e));
    }

    private void post(Runnable body) {
        try {
            thread.execute(task(body));
        } catch (RejectedExecutionException e) {
            LOG.debug("slice publisher closed, dropping an update");
        }
    }

    private ScheduledFuture<?> later(Runnable body, Duration delay) {
        try {
            return thread.schedule(task(body), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** {@code base} times a factor in [0.5, 1.5): waits of many nodes do not line up. */
    private Duration jittered(Duration base) {
        return Duration.ofMillis(Math.max(1, (long) (base.toMillis() * (0.5 + jitter.getAsDouble()))));
    }

    private static Duration doubled(Duration d) {
        return d.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d.multipliedBy(2);
    }

    private void round(String why) {
        if (pool == null || closed) {
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
        } catch (ApiRequests.Failed | RuntimeException e) {
            String text = e instanceof ApiRequests.Failed ? e.getMessage() : ApiServer.describe(e);
            Duration wait = jittered(backoff);
            if (!text.equals(failure)) {
                LOG.warn("ResourceSlices of node {} not published ({}): {}; retrying with backoff up to {} s", node,
                        why, text, MAX_BACKOFF.toSeconds());
            } else {
                LOG.debug("ResourceSlices of node {} still not published: {}", node, text);
            }
            failure = text;
            Status last = status;
            status = new Status(last.slices(), last.generation(), last.devices(), text);
            backoff = doubled(backoff);
            retry = later(() -> {
                retry = null;
                round("a retry");
            }, wait);
        }
        ensureWatch();
    }

    /**
     * A round that the periodic check or the watch asks for; while a retry is pending it waits for that retry, so
     * the backoff holds during an outage.
     */
    private void check(String why) {
        if (retry == null) {
            round(why);
        }
    }

    /** One round against the API server; throws what a request throws. */
    private void sync(String why) throws ApiRequests.Failed {
        if (nodeUid == null) {
            Node found = read("GET", "/api/v1/nodes/" + segment(node), null, Node.class, "the Node " + node);
            if (found == null || found.getMetadata() == null || found.getMetadata().getUid() == null) {
                throw new IllegalStateException("node " + node + " does not exist in the API server");
            }
            nodeUid = found.getMetadata().getUid();
        }
        List<ResourceSlice> existing = new ArrayList<>(listOurs());
        Snapshot snapshot = pool.snapshot();
        // Before the first health verdict the published taints stand (read once per round, for both uses).
        Map<String, String> published = pool.checked() ? Map.of() : publishedTaints(existing);
        Set<String> tainting = pool.checked() ? pool.unhealthyIds() : idsNamed(snapshot, published.keySet());
        Set<ResourceSlices.Omission> omissions = new HashSet<>();
        List<List<SliceDevice>> wanted = ResourceSlices.devices(driver, snapshot, tainting, omissions::add);
        omissions.stream().filter(o -> !omissionsWarned.contains(o)).sorted(Comparator.comparing(
                ResourceSlices.Omission::device).thenComparing(ResourceSlices.Omission::attribute))
                .forEach(o -> LOG.warn("Node {}: {}", node, o.describe()));
        omissionsWarned.retainAll(omissions);
        omissionsWarned.addAll(omissions);
        storedAs.keySet().retainAll(new HashSet<>(wanted));
        updateTaintTimes(wanted, published);
        existing.sort(Comparator.comparing(s -> s.getMetadata().getName()));
        long generation = Math.max(lastGeneration,
                existing.stream().mapToLong(SliceObjects::generation).max().orElse(0));

        // Pair each wanted part with a slice that already holds it, then reuse the rest, create, delete.
        ResourceSlice[] target = new ResourceSlice[wanted.size()];
        List<ResourceSlice> free = new ArrayList<>(existing);
        for (int i = 0; i < wanted.size(); i++) {
            for (ResourceSlice s : free) {
                if (holds(s, wanted.get(i)) && SliceObjects.ownedBy(s, nodeUid)) {
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
            boolean current = base != null && holds(base, wanted.get(i))
                    && SliceObjects.ownedBy(base, nodeUid) && SliceObjects.generation(base) == next
                    && SliceObjects.sliceCount(base) == wanted.size();
            if (current) {
                continue;
            }
            SliceSpec spec = new SliceSpec(driver, node, next, wanted.size(), node, wanted.get(i));
            ResourceSlice object = SliceObjects.toObject(spec, nodeUid, base, taintedSince::get);
            String body = api.requests().json().asJson(object);
            ResourceSlice stored;
            if (base == null) {
                stored = read("POST", SLICES, body, ResourceSlice.class, "a new ResourceSlice");
            } else {
                stored = read("PUT", SLICES + "/" + segment(base.getMetadata().getName()), body, ResourceSlice.class,
                        "ResourceSlice " + base.getMetadata().getName());
            }
            compareStored(wanted.get(i), stored);
            written++;
        }
        for (ResourceSlice s : obsolete) {
            read("DELETE", SLICES + "/" + segment(s.getMetadata().getName()), null, null,
                    "ResourceSlice " + s.getMetadata().getName());
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

    /** Whether {@code slice} holds {@code part}: as sent, or as the server stored it when it dropped fields of it. */
    private boolean holds(ResourceSlice slice, List<SliceDevice> part) {
        List<SliceDevice> devices = SliceObjects.devices(slice);
        return part.equals(devices) || devices.equals(storedAs.get(part));
    }

    /**
     * Compares what the server stored with what was sent, as the Go helper does: a server that drops fields it does
     * not serve (device taints without the {@code DRADeviceTaints} feature gate, off by default in Kubernetes 1.34
     * and 1.35) answers a slice without them. Then the stored form stands for the part (no write again until the
     * part changes, which would be one PUT and one INFO line every round, forever), and one WARN names the fields.
     */
    private void compareStored(List<SliceDevice> sent, ResourceSlice stored) {
        if (stored == null || stored.getSpec() == null) {
            return;
        }
        List<SliceDevice> kept = SliceObjects.devices(stored);
        if (kept == null || kept.equals(sent)) {
            storedAs.remove(sent);
            return;
        }
        storedAs.put(sent, kept);
        String dropped = SliceObjects.droppedFields(sent, kept);
        if (droppedWarned.add(dropped)) {
            LOG.warn("The API server dropped {} from node {}'s ResourceSlice {} (it stored less than was sent; for"
                    + " taints the likely cause is the DRADeviceTaints feature gate, off by default in Kubernetes 1.34"
                    + " and 1.35): the scheduler does not see it, so an unhealthy device stays allocatable; the"
                    + " kubelet's health stream still reports device health. The slice is not sent again until its"
                    + " devices change.", dropped, node,
                    stored.getMetadata() == null ? "?" : Printable.of(stored.getMetadata().getName(), 253));
        }
    }

    /** One bounded request; its answer as {@code type} (null for none), or a failure naming what it was for. */
    private <T> T read(String method, String path, String body, Class<T> type, String what)
            throws ApiRequests.Failed {
        ApiRequests.Answer answer = api.requests().send(method, path, body, ApiRequests.REQUEST_TIMEOUT,
                method.equals("GET") && path.startsWith(SLICES) ? MAX_LIST_BYTES : MAX_ANSWER_BYTES);
        if (answer.code() == 404 && !method.equals("PUT") && !method.equals("POST")) {
            return null; // gone already, or not there (the caller says what that means)
        }
        if (!answer.ok()) {
            String message = ApiRejections.message(api.requests(), answer);
            ApiRejections.heard(observer, LOG, method + " of " + what, answer.code(), message);
            throw new ApiRequests.Failed(method + " of " + what + ": HTTP " + answer.code()
                    + (message.isEmpty() ? "" : ": " + message), null);
        }
        return type == null ? null : api.requests().json().unmarshal(answer.body(), type);
    }

    /** The device names whose published entries carry the unhealthy taint, each with its {@code timeAdded}. */
    private Map<String, String> publishedTaints(List<ResourceSlice> existing) {
        Map<String, String> times = new HashMap<>();
        String key = SliceTaint.unhealthy(driver).key();
        existing.forEach(slice -> SliceObjects.taintTimes(slice, key).forEach(times::putIfAbsent));
        return times;
    }

    /** The ids of the snapshot's devices with these names. */
    private static Set<String> idsNamed(Snapshot snapshot, Set<String> names) {
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
     * empty), a new taint is new, so it takes now.
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

    private List<ResourceSlice> listOurs() throws ApiRequests.Failed {
        ResourceSliceList list = read("GET", SLICES + "?" + selector, null, ResourceSliceList.class,
                "node " + node + "'s ResourceSlices");
        listedVersion = list == null || list.getMetadata() == null ? null : list.getMetadata().getResourceVersion();
        List<ResourceSlice> all = list == null || list.getItems() == null ? List.of() : list.getItems();
        // Driver and node again by hand: a slice someone else labelled must not be rewritten or deleted.
        return all.stream().filter(s -> s.getMetadata() != null && s.getSpec() != null
                && driver.value().equals(s.getSpec().getDriver()) && node.equals(s.getSpec().getNodeName())).toList();
    }

    /**
     * Watches the node's slices from the last list, so that one the kubelet deletes comes back at once; unless a
     * watch is open, being opened, or waiting for its backoff. A watch that cannot start or ends is not a failed
     * publish: the periodic check still recreates deleted slices, and the watch is opened again after its backoff.
     */
    private void ensureWatch() {
        if (!watching || watch != null || watchRestart != null || closed || failure != null) {
            return;
        }
        long timeout = jittered(WATCH_TIMEOUT).toSeconds();
        String path = SLICES + "?" + selector + "&watch=true&allowWatchBookmarks=true&timeoutSeconds=" + timeout
                + (listedVersion == null ? "" : "&resourceVersion=" + URLEncoder.encode(listedVersion,
                StandardCharsets.UTF_8));
        OpenWatch opened = new OpenWatch();
        watch = opened;
        opened.cancel = api.requests().watch(path, MAX_EVENT_BYTES, line -> {
            try {
                event(opened, line);
            } catch (VirtualMachineError e) {
                // On an HTTP thread, which keeps its errors to itself: the liveness probe must hear of it.
                fatal.compareAndSet(null, "a JVM error while reading the ResourceSlice watch: " + e);
                throw e;
            }
        }, why -> opened.end(why));
        watchOpen = true;
    }

    /**
     * One watch as the HTTP threads and the publisher's thread share it: whether it delivered a good event, and
     * whether its end was posted (once, however many errors arrive).
     */
    private final class OpenWatch {
        volatile Runnable cancel = () -> { };
        volatile boolean healthy;
        private final AtomicBoolean ended = new AtomicBoolean();

        /** Any thread: posts the end once. */
        void end(String why) {
            if (ended.compareAndSet(false, true)) {
                post(() -> watchEnded(this, why));
            }
        }
    }

    /**
     * On an HTTP thread: one event, never a task per event. A deletion asks for one round, however many come; an
     * {@code ERROR} event ends the watch.
     */
    private void event(OpenWatch opened, String line) {
        eventsRead.incrementAndGet();
        String type;
        int code;
        try {
            Map<?, ?> event = api.requests().json().unmarshal(line, Map.class);
            type = String.valueOf(event.get("type"));
            Object object = event.get("object");
            code = object instanceof Map<?, ?> o && o.get("code") instanceof Number n ? n.intValue() : 0;
        } catch (RuntimeException e) {
            opened.end("an event that is not JSON: " + Printable.of(line, 80));
            return;
        }
        if (type.equals("ERROR")) {
            opened.end("an ERROR event" + (code > 0 ? " " + code : "") + (code == 410
                    ? " (its resourceVersion is too old)" : ""));
            return;
        }
        opened.healthy = true;
        if (type.equals("DELETED") && eventRoundPending.compareAndSet(false, true)) {
            post(this::eventRound);
        }
    }

    /**
     * On the thread: the round deletions asked for, {@link #EVENT_ROUND_SPACING} from the first of them, so that a
     * stream of deletions makes at most one round a second; those that come meanwhile ask for nothing more.
     */
    private void eventRound() {
        later(() -> {
            eventRoundPending.set(false);
            check("a ResourceSlice was deleted");
        }, EVENT_ROUND_SPACING);
    }

    /** On the thread: a watch ended; a new one opens after its backoff, with a round first. */
    private void watchEnded(OpenWatch ended, String why) {
        if (ended != watch) {
            return;
        }
        ended.cancel.run();
        watch = null;
        watchOpen = false;
        Duration wait;
        if (ended.healthy) {
            // It worked until the server ended it (its timeout, a restart): a new one soon, and nothing to warn of.
            watchBackoff = FIRST_BACKOFF;
            wait = jittered(watchBackoff);
            LOG.debug("The watch of node {}'s ResourceSlices ended ({}); watching again after {} ms", node, why,
                    wait.toMillis());
            watchFailure = null;
        } else {
            wait = jittered(watchBackoff);
            if (!why.equals(watchFailure)) {
                LOG.warn("The watch of node {}'s ResourceSlices ended ({}); watching again with backoff up to {} s,"
                        + " the periodic check recreates deleted slices meanwhile", node, why,
                        MAX_BACKOFF.toSeconds());
            }
            watchFailure = why;
            watchBackoff = doubled(watchBackoff);
        }
        watchRestart = later(() -> {
            watchRestart = null;
            check("the watch is opened again"); // lists first: the new watch starts where that list stands
            ensureWatch();
        }, wait);
    }

    /** Stops publishing; the slices stay. Waits up to 10 s for a round in progress. */
    @Override
    public void close() {
        post(() -> {
            if (watch != null) {
                watch.cancel.run();
                watch = null;
                watchOpen = false;
            }
            closed = true;
        });
        if (ownThread) {
            Threads.stop(thread, Duration.ofSeconds(10));
        }
    }

    private static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static ThreadFactory named(ThreadFactory base) {
        return task -> {
            Thread t = Objects.requireNonNull(base.newThread(task), "the thread factory made no thread");
            t.setName("vgpu-dra-slices");
            t.setDaemon(true);
            return t;
        };
    }

    /** Configuration of a {@link SlicePublisher}; not thread-safe. */
    public static final class Builder {
        private final ApiServer api;
        private final DriverName driver;
        private final String node;
        private Duration checkEvery = Duration.ofSeconds(30);
        private Clock clock = Clock.systemUTC();
        private DoubleSupplier jitter = () -> java.util.concurrent.ThreadLocalRandom.current().nextDouble();
        private DraObserver observer = DraObserver.NONE;
        private ThreadFactory threads = Thread::new;
        private ScheduledExecutorService scheduler;
        private boolean watch = true;

        private Builder(ApiServer api, DriverName driver, String node) {
            this.api = Objects.requireNonNull(api, "api");
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

        /** Makes the publisher's one thread, which it names and makes a daemon thread (plain threads unless set). */
        public Builder threads(ThreadFactory value) {
            threads = Objects.requireNonNull(value, "threads");
            return this;
        }

        /** Hears how many slices each round wrote (metrics); {@link DraObserver#NONE} unless set. */
        public Builder observer(DraObserver value) {
            observer = Objects.requireNonNull(value, "observer");
            return this;
        }

        /** Whether deleted slices are watched for (tests: off, so that only the periodic check recreates them). */
        Builder watch(boolean value) {
            watch = value;
            return this;
        }

        /**
         * The single-thread scheduler the publisher runs on instead of its own thread, left running by
         * {@code close} (tests: a scheduler that records the waits asked of it).
         */
        Builder scheduler(ScheduledExecutorService value) {
            scheduler = Objects.requireNonNull(value, "scheduler");
            return this;
        }

        /** Where the jitter of every wait comes from: a factor in [0, 1) (tests: a fixed one). */
        Builder jitter(DoubleSupplier value) {
            jitter = Objects.requireNonNull(value, "jitter");
            return this;
        }

        /** Starts the publisher's thread; nothing is published before the first {@link #publish}. */
        public SlicePublisher start() {
            return new SlicePublisher(this);
        }
    }
}
