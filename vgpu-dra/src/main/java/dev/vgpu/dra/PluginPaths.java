package dev.vgpu.dra;

import java.nio.file.Path;

/**
 * Where the plugin's sockets and files live (docs/DRA.md §1, §5, §6), all derived from the driver name and three
 * directories. Paths are absolute: the kubelet dials the endpoint as given, and a CDI mount's host path must be one.
 *
 * @param driver      the driver name
 * @param kubeletRoot the kubelet's root directory, {@code /var/lib/kubelet} on a node
 * @param cdiDir      where CDI specs go, {@code /var/run/cdi} on a node
 * @param stateDir    where the prepared-claims checkpoint is kept
 */
record PluginPaths(DriverName driver, Path kubeletRoot, Path cdiDir, Path stateDir) {

    PluginPaths {
        kubeletRoot = kubeletRoot.toAbsolutePath().normalize();
        cdiDir = cdiDir.toAbsolutePath().normalize();
        stateDir = stateDir.toAbsolutePath().normalize();
    }

    /** {@code <kubelet-root>/plugins_registry/<driver>-reg.sock}, the socket the kubelet's plugin watcher finds. */
    Path registrationSocket() {
        return kubeletRoot.resolve("plugins_registry").resolve(driver + "-reg.sock");
    }

    /** {@code <kubelet-root>/plugins/<driver>}, the plugin's own directory. */
    Path pluginDir() {
        return kubeletRoot.resolve("plugins").resolve(driver.value());
    }

    /** {@code <kubelet-root>/plugins/<driver>/dra.sock}, the DRA service endpoint. */
    Path draSocket() {
        return pluginDir().resolve("dra.sock");
    }

    /** The host directory of one claim's metadata files: {@code dra-device-metadata/<namespace>_<name>}. */
    Path metadataDir(ClaimRef claim) {
        return pluginDir().resolve("dra-device-metadata").resolve(claim.namespace() + "_" + claim.name());
    }

    /** The claim's CDI spec, {@code <cdi-dir>/<driver>-claim_<uid>.json} (CDI's transient-spec naming). */
    Path claimSpec(String uid) {
        return cdiDir.resolve(driver + "-claim_" + uid + ".json");
    }

    /** The CDI spec mounting one request's metadata, {@code <cdi-dir>/<driver>_metadata_<uid>_<request>.json}. */
    Path metadataSpec(String uid, String baseRequest) {
        return cdiDir.resolve(metadataSpecPrefix(uid) + baseRequest + ".json");
    }

    /** What every metadata spec file name of a claim starts with. */
    String metadataSpecPrefix(String uid) {
        return driver + "_metadata_" + uid + "_";
    }

    /** The prepared-claims checkpoint. */
    Path checkpoint() {
        return stateDir.resolve("dra-prepared-claims");
    }
}
