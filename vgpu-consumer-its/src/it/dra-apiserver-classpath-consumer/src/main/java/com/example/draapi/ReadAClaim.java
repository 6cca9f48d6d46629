package com.example.draapi;

import dev.vgpu.dra.ClaimReader;
import dev.vgpu.dra.ClaimRef;
import dev.vgpu.dra.DriverName;
import dev.vgpu.dra.apiserver.ApiClaimReader;
import dev.vgpu.dra.apiserver.ApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Connects to an API server nobody listens at and reads one claim within two seconds: the reader answers that it
 * cannot, in words, well inside that time, and the connection's threads end with it.
 */
public final class ReadAClaim {

    public static void main(String[] args) throws Exception {
        Path kubeconfig = Files.createTempFile("kubeconfig", ".yaml");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """);
        try (ApiServer api = ApiServer.connect(Optional.of(kubeconfig), Thread::new)) {
            ClaimReader.Answer answer = new ApiClaimReader(api, DriverName.DEFAULT)
                    .read(new ClaimRef("vms", "gpu", "u-1"), Duration.ofSeconds(2));
            if (!(answer instanceof ClaimReader.Unavailable unavailable)) {
                throw new IllegalStateException("unexpected " + answer);
            }
            System.out.println("API READER OK: " + unavailable.reason());
        } finally {
            Files.delete(kubeconfig);
        }
    }
}
