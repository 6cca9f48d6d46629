package dev.vgpu.dra;

import java.util.Objects;

/** What the kubelet last said about the plugin's registration (its {@code NotifyRegistrationStatus}). */
public sealed interface KubeletRegistration
        permits KubeletRegistration.Waiting, KubeletRegistration.Registered, KubeletRegistration.Rejected {

    /** No kubelet has reported yet. */
    record Waiting() implements KubeletRegistration {
    }

    /** The kubelet accepted the plugin and will call its DRA socket. */
    record Registered() implements KubeletRegistration {
    }

    /**
     * The kubelet refused the plugin (an endpoint it cannot use, no version it knows).
     *
     * @param error the kubelet's words
     */
    record Rejected(String error) implements KubeletRegistration {
        /** Checks that there is an error. */
        public Rejected {
            Objects.requireNonNull(error, "error");
        }
    }
}
