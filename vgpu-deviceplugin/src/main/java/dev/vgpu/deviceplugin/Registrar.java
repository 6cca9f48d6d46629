package dev.vgpu.deviceplugin;

import dev.vgpu.core.Durations;
import dev.vgpu.core.ResourceName;
import dev.vgpu.deviceplugin.v1beta1.DevicePluginOptions;
import dev.vgpu.deviceplugin.v1beta1.RegisterRequest;
import dev.vgpu.deviceplugin.v1beta1.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
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
 * attempts run on the shared scheduler. The fields below are guarded by {@code this}; the blocking Register call
 * runs without holding it, and its result is dropped when a newer round (or a cancel) began meanwhile.
 */
final class Registrar {

    private static final Logger LOG = LoggerFactory.getLogger(Registrar.class);
    /** Longer than the kubelet's own 10 s dial back to the plugin socket. */
    private static final Duration REGISTER_DEADLINE = Duration.ofSeconds(15);

    private final ResourceName name;
    private final PluginEnvironment env;
    private final RegisterRequest request;

    private long round;
    private Future<?> pending;
    private boolean inFlight;
    private KubeletSocket registeredWith;
    private Optional<KubeletSocket> lastTried = Optional.empty();
    private String lastOutcome = "";

    Registrar(ResourceName name, PluginEnvironment env, DevicePluginOptions options) {
        this.name = name;
        this.env = env;
        this.request = RegisterRequest.newBuilder()
                .setVersion("v1beta1")
                .setEndpoint(name.socketFileName())
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

    /** Whether the last registration succeeded and still holds (for tests). */
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
        String outcome;
        if (kubelet.isEmpty()) {
            outcome = "kubelet socket " + env.kubeletSocket() + " is missing";
        } else {
            outcome = register();
        }
        synchronized (this) {
            inFlight = false;
            if (forRound != round) {
                return;
            }
            boolean changed = !stateOf(outcome).equals(stateOf(lastOutcome));
            lastOutcome = outcome;
            if (outcome.isEmpty()) {
                registeredWith = kubelet.get();
                LOG.info("Registered {} with the kubelet (endpoint {})", name, request.getEndpoint());
                env.observer().registered(name);
                return;
            }
            if (changed) {
                LOG.warn("Cannot register {} with the kubelet: {}; retrying with backoff up to {}", name, outcome,
                        Durations.formatGo(env.backoffMax()));
            } else {
                LOG.debug("Registration of {} still failing: {}; next try in {}", name, outcome,
                        Durations.formatGo(nextDelay));
            }
            Duration doubled = nextDelay.multipliedBy(2);
            schedule(forRound, nextDelay, doubled.compareTo(env.backoffMax()) > 0 ? env.backoffMax() : doubled);
        }
    }

    /** The part of an outcome that names the state, without the details that vary from try to try. */
    private static String stateOf(String outcome) {
        int detail = outcome.indexOf(" (");
        return detail < 0 ? outcome : outcome.substring(0, detail);
    }

    /** One Register call; the empty string on success, else what went wrong. */
    private String register() {
        ManagedChannel channel = null;
        try {
            channel = env.kubeletClient().dial(env.kubeletSocket());
            RegistrationGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(REGISTER_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .register(request);
            return "";
        } catch (StatusRuntimeException e) {
            return "kubelet answered " + e.getStatus().getCode()
                    + (e.getStatus().getDescription() == null ? "" : " (" + e.getStatus().getDescription() + ")");
        } catch (RuntimeException e) {
            return "cannot reach the kubelet (" + e + ")";
        } catch (LinkageError e) {
            // A missing class (a module left off the module path, for example) must not end the retries silently.
            return "registration failed inside this process (" + e + ")";
        } finally {
            if (channel != null) {
                channel.shutdownNow();
            }
        }
    }
}
