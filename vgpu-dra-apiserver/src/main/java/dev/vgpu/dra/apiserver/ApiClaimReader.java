package dev.vgpu.dra.apiserver;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.dra.AllocatedClaim;
import dev.vgpu.dra.AllocatedDevice;
import dev.vgpu.dra.ClaimReader;
import dev.vgpu.dra.ClaimRef;
import dev.vgpu.dra.DraObserver;
import dev.vgpu.dra.DriverName;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Reads claims from the API server (docs/DRA.md §3): a GET of the {@code resource.k8s.io/v1} ResourceClaim by
 * namespace and name; the UID must be the kubelet's (a claim deleted and re-created under the same name is another
 * claim); {@code status.allocation} must be set; of {@code status.allocation.devices.results} only this driver's
 * entries are kept; the annotation {@code resource.kubernetes.io/pod-claim-name} gives a template-made claim's
 * pod-level name, and {@code resource.kubernetes.io/extended-resource-claim: "true"} marks a claim the scheduler made
 * for a plain extended-resource request; a result's {@code adminAccess} is kept. Every failure is an
 * {@link ClaimReader.Unavailable} in words, which the kubelet retries.
 *
 * <p>Inside the kubelet's deadline (docs/RELIABILITY.md, "DRA mode"): each GET takes at most what is left of the
 * call (and at most 10 s), reads at most {@value #MAX_BYTES} bytes, and is tried at most {@value #ATTEMPTS} times, again
 * only after an answer that says to (429, a 5xx) or a failed connection, after the server's {@code Retry-After} or
 * a short backoff, and only while time is left: the kubelet retries the whole call itself.
 * <pre>{@code
 * ClaimReader reader = new ApiClaimReader(api, DriverName.DEFAULT);
 * }</pre>
 * Thread-safe; the plugin calls it from its read thread.
 */
public final class ApiClaimReader implements ClaimReader {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ApiClaimReader.class);

    /** How many times one claim is asked for at most. */
    static final int ATTEMPTS = 3;
    /** The largest claim read: 32 results and their configuration take a few KiB. */
    static final int MAX_BYTES = 1 << 20;
    /** The annotation a claim made from a template carries. */
    static final String POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name";
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(250);

    private final ApiServer api;
    private final DriverName driver;
    private final DraObserver observer;

    /** A reader of {@code driver}'s results through {@code api}. */
    public ApiClaimReader(ApiServer api, DriverName driver) {
        this(api, driver, DraObserver.NONE);
    }

    /**
     * A reader that also tells {@code observer} of every request the API server rejected
     * ({@link DraObserver#apiRejected}), for metrics.
     */
    public ApiClaimReader(ApiServer api, DriverName driver, DraObserver observer) {
        this.api = Objects.requireNonNull(api, "api");
        this.driver = Objects.requireNonNull(driver, "driver");
        this.observer = Objects.requireNonNull(observer, "observer");
    }

    /** Reads within the kubelet's own 45 s. */
    @Override
    public Answer read(ClaimRef ref) {
        return read(ref, Duration.ofSeconds(45));
    }

    @Override
    public Answer read(ClaimRef ref, Duration timeLeft) {
        String name = ref.namespace() + "/" + ref.name();
        String path = "/apis/resource.k8s.io/v1/namespaces/" + segment(ref.namespace()) + "/resourceclaims/"
                + segment(ref.name());
        long deadline = System.nanoTime() + timeLeft.toNanos();
        Duration backoff = FIRST_BACKOFF;
        String last = "no attempt in the time left";
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            Duration left = Duration.ofNanos(deadline - System.nanoTime());
            if (left.toMillis() < 1) {
                break;
            }
            ApiRequests.Answer answer;
            try {
                answer = api.requests().send("GET", path, null, min(left, ApiRequests.REQUEST_TIMEOUT), MAX_BYTES);
            } catch (ApiRequests.Failed e) {
                last = e.getMessage();
                if (!pause(backoff, deadline)) {
                    break;
                }
                backoff = backoff.multipliedBy(2);
                continue;
            }
            if (answer.ok()) {
                return allocated(ref, name, answer.body());
            }
            last = "HTTP " + answer.code();
            if (answer.code() == 404) {
                return new Unavailable("claim " + Printable.of(name, 320) + " does not exist");
            }
            String message = ApiRejections.message(api.requests(), answer);
            ApiRejections.heard(observer, LOG, "GET of claim " + Printable.of(name, 320), answer.code(), message);
            if (answer.code() != 429 && answer.code() < 500) {
                // The server said no (forbidden, bad request): asking again changes nothing; its words go to the
                // kubelet's event too.
                last += message.isEmpty() ? "" : ": " + message;
                break;
            }
            if (!pause(answer.retryAfter().orElse(backoff), deadline)) {
                break;
            }
            backoff = backoff.multipliedBy(2);
        }
        return new Unavailable("cannot read claim " + Printable.of(name, 320) + " from the API server: "
                + Printable.of(last, 200));
    }

    private Answer allocated(ClaimRef ref, String name, String body) {
        ResourceClaim claim;
        try {
            claim = api.requests().json().unmarshal(body, ResourceClaim.class);
        } catch (RuntimeException e) {
            return new Unavailable("claim " + Printable.of(name, 320) + " cannot be read: " + ApiServer.describe(e));
        }
        if (claim == null || claim.getMetadata() == null) {
            return new Unavailable("claim " + Printable.of(name, 320) + " does not exist");
        }
        if (!ref.uid().equals(claim.getMetadata().getUid())) {
            return new Unavailable("claim " + Printable.of(name, 320) + " has UID "
                    + Printable.of(claim.getMetadata().getUid(), 64) + ", not " + Printable.of(ref.uid(), 64)
                    + " (deleted and created again?)");
        }
        if (claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
            return new Unavailable("claim " + Printable.of(name, 320) + " is not allocated");
        }
        List<AllocatedDevice> results = new ArrayList<>();
        var devices = claim.getStatus().getAllocation().getDevices();
        if (devices != null && devices.getResults() != null) {
            for (DeviceRequestAllocationResult r : devices.getResults()) {
                if (driver.value().equals(r.getDriver())) {
                    if (r.getRequest() == null || r.getPool() == null || r.getDevice() == null) {
                        return new Unavailable("claim " + Printable.of(name, 320)
                                + " has an allocation result without request, pool or device");
                    }
                    results.add(new AllocatedDevice(r.getRequest(), r.getDriver(), r.getPool(), r.getDevice(),
                            Boolean.TRUE.equals(r.getAdminAccess())));
                }
            }
        }
        Map<String, String> annotations = claim.getMetadata().getAnnotations();
        Optional<String> podClaimName = annotations == null ? Optional.empty()
                : Optional.ofNullable(annotations.get(POD_CLAIM_NAME)).filter(s -> !s.isEmpty());
        boolean extended = annotations != null
                && "true".equals(annotations.get(AllocatedClaim.EXTENDED_RESOURCE_ANNOTATION));
        return new Allocated(new AllocatedClaim(ref, podClaimName, results, extended));
    }

    /** Waits {@code wait} unless that passes the deadline; false when no time is left for another attempt. */
    private static boolean pause(Duration wait, long deadline) {
        long until = System.nanoTime() + wait.toNanos();
        if (until - deadline >= 0) {
            return false;
        }
        try {
            Thread.sleep(Math.max(1, wait.toMillis()));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) < 0 ? a : b;
    }

    /** A name as one path segment: the kubelet's names are DNS names, anything else is percent-encoded. */
    private static String segment(String name) {
        return java.net.URLEncoder.encode(name, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }
}
