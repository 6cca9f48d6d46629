package dev.vgpu.configurator;

import dev.vgpu.core.PciAddress;
import java.util.Objects;
import java.util.Optional;

/** One write of a plan, with its words. Immutable. */
public sealed interface Step permits Step.EnableVfs, Step.SetType, Step.ClearType {

    /** The step in words: {@code set VF 0000:41:00.4 to "NVIDIA L40S-4Q" (type 1150)}. */
    String describe();

    /**
     * Enable a card's VFs: write the count to its {@code sriov_numvfs} (which must be 0 before).
     *
     * @param pf    the card
     * @param count how many, at least 1
     */
    record EnableVfs(PciAddress pf, int count) implements Step {

        /** Checks. */
        public EnableVfs {
            Objects.requireNonNull(pf, "pf");
            if (count < 1) {
                throw new IllegalArgumentException("enable at least one VF, got " + count);
            }
        }

        @Override
        public String describe() {
            return "enable " + count + " VFs on card " + pf;
        }
    }

    /**
     * Create a vGPU: write its type id to a VF's {@code nvidia/current_vgpu_type} (the VF holds none before).
     *
     * @param vf      the VF
     * @param typeId  the card-local type id, at least 1
     * @param profile the type's profile name as the card names it
     */
    record SetType(PciAddress vf, long typeId, String profile) implements Step {

        /** Checks. */
        public SetType {
            Objects.requireNonNull(vf, "vf");
            Objects.requireNonNull(profile, "profile");
            if (typeId < 1) {
                throw new IllegalArgumentException("a vGPU type id is at least 1, got " + typeId);
            }
        }

        @Override
        public String describe() {
            return "set VF " + vf + " to " + ProfileNames.quoted(profile) + " (type " + typeId + ")";
        }
    }

    /**
     * Destroy a vGPU: write {@code 0} to a VF's {@code nvidia/current_vgpu_type}.
     *
     * @param vf              the VF
     * @param previousTypeId  the type it holds when the step runs, at least 1 (the applier checks it first)
     * @param previousProfile that type's name, when known
     */
    record ClearType(PciAddress vf, long previousTypeId, Optional<String> previousProfile) implements Step {

        /** Checks. */
        public ClearType {
            Objects.requireNonNull(vf, "vf");
            Objects.requireNonNull(previousProfile, "previousProfile");
            if (previousTypeId < 1) {
                throw new IllegalArgumentException("only a VF holding a vGPU is cleared, got type " + previousTypeId);
            }
        }

        @Override
        public String describe() {
            return "clear VF " + vf + " (it holds " + previousProfile.map(p -> ProfileNames.quoted(p) + " (type "
                    + previousTypeId + ")").orElse("type " + previousTypeId) + ")";
        }
    }
}
