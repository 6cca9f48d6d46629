package dev.vgpu.deviceplugin;

import dev.vgpu.core.Durations;
import dev.vgpu.core.ResourceName;
import dev.vgpu.deviceplugin.v1beta1.DevicePluginOptions;
import dev.vgpu.deviceplugin.v1beta1.RegisterRequest;
import dev.vgpu.deviceplugin.v1beta1.RegistrationGrpc;
import dev.vgpu.deviceplugin.v1beta1.Empty;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers one plugin with the kubelet, retrying with capped exponential backoff until it succeeds or is
 * cancelled; logs once per change of outcome (not once per attempt).
 *
 * <p>Threads: {@link #request()} and {@link #cancel()} come from the plugin's lifecycle (under its lock);
 * attempts start on the shared scheduler and never block it: the Register call is asynchronous and its answer
 * arrives on the kubelet client's executor, so a kubelet that never answers holds no scheduler thread (health
 * and kubelet-watch checks share that scheduler). The fields below are guarded by {@code this}; an answer is
 * dropped when a newer round (or a cancel) began meanwhile.
 */
final class Registrar {

    private static final Logger LOG = LoggerFactory.getLogger(Registrar.class);
    /** Longer than the kubelet's own 10 s dial back to the plugin socket. */
    private static final Duration REGISTER_DEADLINE = Duration.ofSeconds(15);

    /**
     * How one attempt ended.
     *
     * @param state  what happened, stable from try to try (compared to log once per change)
     * @param detail what varies from try to try (a status description, an exception), for the log
     */
    record Outcome(String state, String detail) {
        static final Outcome REGISTERED = new Outcome("", "");
        static final Outcome NONE = new Outcome("not tried yet", "");

        boolean registered() {
            return state.isEmpty();
        }

        @Override
        public String toString() {
            return detail.isEmpty() ? state : state + " (" + detail + ")";
        }
    }

    private final ResourceName name;
    private final PluginEnvironment env;
    private final RegisterRequest request;

    private long round;
    private Future<?> pending;
    private boolean inFlight;
    private KubeletSocket registeredWith;
    private Optional<KubeletSocket> lastTried = Optional.empty();
    private Outcome lastOutcome = Outcome.NONE;

    /**
     * @param endpoint the plugin socket's file name in the device-plugin directory, as the kubelet dials it
     */
    Registrar(ResourceName name, String endpoint, PluginEnvironment env, DevicePluginOptions options) {
        this.name = name;
        this.env = env;
        this.request = RegisterRequest.newBuilder()
                .setVersion("v1beta1")
                .setEndpoint(endpoint)
                .setResourceName(name.fullName())
                .setOptions(options)
                .build();
    }

    /** Starts a new registration round now, abandoning any earlier one. */
    synchronized void request() {
        round++;
        registeredWith = null;
        schedule(round, Duration.ZERO, env.backoffInitial());
    }

    /** Abandons registration (the plugin stops). */
    synchronized void cancel() {
        round++;
        registeredWith = null;
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }

    /**
     * Reacts to the kubelet socket seen by a check: registers again when it differs from the one of the last
     * registration (the kubelet restarted), or tries at once when it appeared or changed during a backoff wait.
     */
    synchronized void kubeletSeen(Optional<KubeletSocket> now) {
        if (inFlight || now.isEmpty()) {
            return;
        }
        if (registeredWith != null && !registeredWith.equals(now.get())) {
            LOG.info("Registering {} again: {} is new", name, env.kubeletSocket());
            request();
        } else if (registeredWith == null && pending != null && !now.equals(lastTried)) {
            request();
        }
    }

    /** Whether the last registration succeeded and still holds. */
    synchronized boolean registered() {
        return registeredWith != null;
    }

    private void schedule(long forRound, Duration delay, Duration nextDelay) {
        if (pending != null) {
            pending.cancel(false);
        }
        try {
            pending = env.scheduler().schedule(Guarded.task("registration of " + name,
                    () -> attempt(forRound, nextDelay)), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            pending = null; // the manager is closing
        }
    }

    /** Starts one attempt; returns at once, the answer finishes it. */
    private void attempt(long forRound, Duration nextDelay) {
        synchronized (this) {
            if (forRound != round) {
                return;
            }
            pending = null;
            inFlight = true;
        }
        Optional<KubeletSocket> kubelet = KubeletSocket.at(env.kubeletSocket());
        synchronized (this) {
            lastTried = kubelet;
        }
        if (kubelet.isEmpty()) {
            finish(forRound, nextDelay, kubelet, new Outcome("kubelet socket " + env.kubeletSocket() + " is missing",
                    ""));
            return;
        }
        ManagedChannel channel;
        try {
            channel = env.kubeletClient().dial(env.kubeletSocket());
        } catch (RuntimeException e) {
            finish(forRound, nextDelay, kubelet, new Outcome("cannot reach the kubelet", e.toString()));
            return;
        }
        try {
            RegistrationGrpc.newStub(channel).withDeadlineAfter(REGISTER_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .register(request, new StreamObserver<>() {
                        private boolean answered;

                        @Override
                        public void onNext(Empty value) {
                            answered = true;
                        }

                        @Override
                        public void onError(Throwable t) {
                            channel.shutdownNow();
                            Status status = Status.fromThrowable(t);
                            finish(forRound, nextDelay, kubelet, new Outcome("kubelet answered " + status.getCode(),
                                    status.getDescription() == null ? "" : status.getDescription()));
                        }

                        @Override
                        public void onCompleted() {
                            channel.shutdownNow();
                            finish(forRound, nextDelay, kubelet, answered ? Outcome.REGISTERED
                                    : new Outcome("kubelet answered nothing", ""));
                        }
                    });
        } catch (RuntimeException | LinkageError e) {
            // A missing class (a module left off the module path, for example) must not end the retries silently.
            channel.shutdownNow();
            finish(forRound, nextDelay, kubelet, new Outcome("registration failed inside this process", e.toString()));
        }
    }

    /** Records an attempt's outcome: success, or a retry after {@code nextDelay} (doubled up to the cap). */
    private void finish(long forRound, Duration nextDelay, Optional<KubeletSocket> kubelet, Outcome outcome) {
        synchronized (this) {
            inFlight = false;
            if (forRound != round) {
                return;
            }
            boolean changed = !outcome.state().equals(lastOutcome.state());
            lastOutcome = outcome;
            if (outcome.registered()) {
                registeredWith = kubelet.orElseThrow();
                LOG.info("Registered {} with the kubelet (endpoint {})", name, request.getEndpoint());
            } else {
                if (changed) {
                    LOG.warn("Cannot register {} with the kubelet: {}; retrying with backoff up to {}", name, outcome,
                            Durations.formatGo(env.backoffMax()));
                } else {
                    LOG.debug("Registration of {} still failing: {}; next try in {}", name, outcome,
                            Durations.formatGo(nextDelay));
                }
                Duration doubled = nextDelay.multipliedBy(2);
                schedule(forRound, nextDelay, doubled.compareTo(env.backoffMax()) > 0 ? env.backoffMax() : doubled);
                return;
            }
        }
        env.observer().registered(name);
    }
}
