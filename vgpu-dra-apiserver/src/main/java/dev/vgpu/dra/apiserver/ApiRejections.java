package dev.vgpu.dra.apiserver;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.dra.DraObserver;
import org.slf4j.Logger;

/**
 * What the API server refused, made visible (docs/DRA.md, "API rejections"): every answer that is neither a success
 * nor a 404 (which callers read as "gone") is told to the observer with its status code, for the metric; a
 * rejection of the request itself (a 4xx but 429: 400, 403, 409, 422, ...) is one WARN with the code and the
 * server's message, so an operator sees why a slice or a claim read was refused. A 429 or a 5xx is the server's
 * state, not a verdict on the request: it is logged at DEBUG here, and its caller's retry says the rest. Stateless.
 */
final class ApiRejections {

    private ApiRejections() {
    }

    /** The message of a Status answer, escaped and cut to 300 characters; empty when the body holds none. */
    static String message(ApiRequests requests, ApiRequests.Answer answer) {
        try {
            io.fabric8.kubernetes.api.model.Status status = requests.json().unmarshal(answer.body(),
                    io.fabric8.kubernetes.api.model.Status.class);
            return status != null && status.getMessage() != null ? Printable.of(status.getMessage(), 300) : "";
        } catch (RuntimeException e) {
            return "";
        }
    }

    /**
     * Tells the observer of a non-success answer and logs it.
     *
     * @param what    the request in words, e.g. {@code POST of a new ResourceSlice}
     * @param message the server's message ({@link #message}); may be empty
     */
    static void heard(DraObserver observer, Logger log, String what, int code, String message) {
        observer.apiRejected(code);
        String text = message.isEmpty() ? "" : ": " + message;
        if (code >= 400 && code < 500 && code != 429) {
            log.warn("The API server rejected the {}: HTTP {}{}", what, code, text);
        } else {
            log.debug("The API server answered the {} with HTTP {}{}", what, code, text);
        }
    }
}
