package dev.vgpu.deviceplugin;

import dev.vgpu.core.ResourceName;
import dev.vgpu.core.internal.GoDurations;
import dev.vgpu.kubelet.api.v1beta1.DevicePluginOptions;
import dev.vgpu.kubelet.api.v1beta1.Empty;
import dev.vgpu.kubelet.api.v1beta1.RegisterRequest;
import dev.vgpu.kubelet.api.v1beta1.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers one plugin with the kubelet, retrying with capped exponential backoff until it succeeds or is
 * cancelled; logs once per change of outcome (not once per attempt).
 *
 * <p>Threads: owned by the manager's context (docs/ARCHITECTURE.md, "Threads and mutable state"): every method and
 * field below is touched only there. Attempts are scheduled on the context; the Register call is asynchronous and
 * its answer, arriving on a gRPC thread, only posts {@code finish} back, so a kubelet that never answers holds no
 * thread. An answer is dropped when a newer round (or a cancel) began meanwhile. Which kubelet socket is the current
 * one is the manager's {@link KubeletSocket} memory; this class keeps only the generation it registered with.
 */
final class Registrar {

    private static final Logger LOG = LoggerFactory.getLogger(Registrar.class);
    /** Longer than the kubelet's own 10 s dial back to the plugin socket. */
    private static final Duration REGISTER_DEADLINE = Duration.ofSeconds(15);

    /** How one attempt ended (or that none has yet). */
    sealed interface Outcome {
        /** Whether two outcomes are the same for the log (a failure's detail varies from try to try). */
        boolean sameAs(Outcome other);
    }

    /** No attempt finished yet. */
    record NotTried() implements Outcome {
        @Override
        public boolean sameAs(Outcome other) {
            return other instanceof NotTried;
        }
    }

    /** The kubelet accepted the registration. */
    record Registered() implements Outcome {
        @Override
        public boolean sameAs(Outcome other) {
            return other instanceof Registered;
        }
    }

    /**
     * The attempt failed.
     *
     * @param problem what happened, stable from try to try (compared to log once per change)
     * @param detail  what varies from try to try (a status description, an exception), for the log; may be empty
     */
    record Failed(String problem, String detail) implements Outcome {
        @Override
        public boolean sameAs(Outcome other) {
            return other instanceof Failed f && f.problem.equals(problem);
        }

        @Override
        public String toString() {
            return detail.isEmpty() ? problem : problem + " (" + detail + ")";
        }
    }

    private final ResourceName name;
    private final PluginEnvironment env;
    private final RegisterRequest request;
    private final Runnable onChange;
    private final Runnable onAttempt;

    private long round;
    private Future<?> pending;
    private boolean inFlight;
    /** The kubelet generation of the registration that holds now; {@link KubeletSocket#NONE} when none does. */
    private int registeredWith = KubeletSocket.NONE;
    /** The kubelet generation the last attempt found. */
    private int lastTried = KubeletSocket.NONE;
    private Outcome lastOutcome = new NotTried();

    /**
     * @param endpoint the plugin socket's file name in the device-plugin directory, as the kubelet dials it
     * @param onChange runs in the context whenever {@link #registered()} may have changed
     * @param onAttempt runs in the context just before each Register is sent (the kubelet opens its ListAndWatch
     *                  stream once it has accepted one)
     */
    Registrar(ResourceName name, String endpoint, PluginEnvironment env, DevicePluginOptions options,
              Runnable onChange, Runnable onAttempt) {
        this.name = name;
        this.env = env;
        this.onChange = onChange;
        this.onAttempt = onAttempt;
        this.request = RegisterRequest.newBuilder()
                .setVersion("v1beta1")
                .setEndpoint(endpoint)
                .setResourceName(name.fullName())
                .setOptions(options)
                .build();
    }

    /** Starts a new registration round now, abandoning any earlier one. */
    void request() {
        env.context().checkInContext();
        round++;
        forget();
        schedule(round, Duration.ZERO, env.backoffInitial());
    }

    /** Abandons registration (the plugin stops or restarts). */
    void cancel() {
        round++;
        forget();
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }

    /**
     * Reacts to the kubelet generation seen by a check: registers again when it differs from the one of the last
     * registration (the kubelet restarted), or tries at once when it appeared or changed during a backoff wait.
     */
    void kubeletSeen(int now) {
        if (inFlight || now == KubeletSocket.NONE) {
            return;
        }
        if (registeredWith != KubeletSocket.NONE && registeredWith != now) {
            LOG.info("Registering {} again: {} is new", name, env.kubelet().path());
            request();
        } else if (registeredWith == KubeletSocket.NONE && pending != null && now != lastTried) {
            request();
        }
    }

    /** Whether the last registration succeeded and still holds. */
    boolean registered() {
        return registeredWith != KubeletSocket.NONE;
    }

    private void forget() {
        if (registeredWith != KubeletSocket.NONE) {
            registeredWith = KubeletSocket.NONE;
            onChange.run();
        }
    }

    private void schedule(long forRound, Duration delay, Duration nextDelay) {
        if (pending != null) {
            pending.cancel(false);
        }
        pending = env.context().schedule(() -> attempt(forRound, nextDelay), delay.toNanos());
    }

    /** Starts one attempt, in the context; returns at once, the answer finishes it. */
    private void attempt(long forRound, Duration nextDelay) {
        if (forRound != round) {
            return;
        }
        pending = null;
        inFlight = true;
        int kubelet = env.kubelet().look();
        lastTried = kubelet;
        if (kubelet == KubeletSocket.NONE) {
            finish(forRound, nextDelay, kubelet, new Failed("kubelet socket " + env.kubelet().path() + " is missing",
                    ""));
            return;
        }
        onAttempt.run();
        ManagedChannel channel;
        try {
            channel = env.kubeletClient().dial(env.kubelet().path());
        } catch (RuntimeException e) {
            finish(forRound, nextDelay, kubelet, new Failed("cannot reach the kubelet", e.toString()));
            return;
        }
        try {
            RegistrationGrpc.newStub(channel).withDeadlineAfter(REGISTER_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .register(request, new StreamObserver<>() {
                        // Callbacks of one call come one at a time on a gRPC thread; they only post to the context.
                        private boolean answered;

                        @Override
                        public void onNext(Empty value) {
                            answered = true;
                        }

                        @Override
                        public void onError(Throwable t) {
                            channel.shutdownNow();
                            Status status = Status.fromThrowable(t);
                            Outcome outcome = new Failed("kubelet answered " + status.getCode(),
                                    status.getDescription() == null ? "" : status.getDescription());
                            env.context().execute(() -> finish(forRound, nextDelay, kubelet, outcome));
                        }

                        @Override
                        public void onCompleted() {
                            channel.shutdownNow();
                            Outcome outcome = answered ? new Registered() : new Failed("kubelet answered nothing", "");
                            env.context().execute(() -> finish(forRound, nextDelay, kubelet, outcome));
                        }
                    });
        } catch (RuntimeException | LinkageError e) {
            // A missing class (a module left off the module path, for example) must not end the retries silently.
            channel.shutdownNow();
            finish(forRound, nextDelay, kubelet, new Failed("registration failed inside this process", e.toString()));
        }
    }

    /** Records an attempt's outcome, in the context: success, or a retry after {@code nextDelay} (doubled, capped). */
    private void finish(long forRound, Duration nextDelay, int kubelet, Outcome outcome) {
        inFlight = false;
        if (forRound != round) {
            return;
        }
        boolean changed = !outcome.sameAs(lastOutcome);
        lastOutcome = outcome;
        if (outcome instanceof Registered) {
            registeredWith = kubelet;
            LOG.info("Registered {} with the kubelet (endpoint {})", name, request.getEndpoint());
            onChange.run();
            env.observer().registered(name);
            return;
        }
        if (changed) {
            LOG.warn("Cannot register {} with the kubelet: {}; retrying with backoff up to {}", name, outcome,
                    GoDurations.format(env.backoffMax()));
        } else {
            LOG.debug("Registration of {} still failing: {}; next try in {}", name, outcome,
                    GoDurations.format(nextDelay));
        }
        Duration doubled = nextDelay.multipliedBy(2);
        schedule(forRound, nextDelay, doubled.compareTo(env.backoffMax()) > 0 ? env.backoffMax() : doubled);
    }
}
