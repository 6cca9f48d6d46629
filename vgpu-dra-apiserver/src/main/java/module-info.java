/**
 * The API-server side of vgpu's DRA driver (docs/DRA.md §3, §4): {@link dev.vgpu.dra.apiserver.ApiClaimReader} reads
 * the claims a Prepare names, {@link dev.vgpu.dra.apiserver.SlicePublisher} keeps the node's ResourceSlices
 * published, both through one {@link dev.vgpu.dra.apiserver.ApiServer} connection with bounded requests, bodies and
 * watches (docs/RELIABILITY.md, "DRA mode"). Apart from {@code dev.vgpu.dra}, so that an embedder of the kubelet-side
 * plugin carries no API client.
 */
// fabric8's KubernetesClient is in this module's API (ApiServer.of), so its module is transitive although automatic.
@SuppressWarnings("requires-transitive-automatic")
module dev.vgpu.dra.apiserver {
    requires transitive dev.vgpu.dra;
    requires org.slf4j;
    // fabric8's client API and models (automatic modules named after their jar files, since fabric8 8.0.0 declares
    // no module names; docs/BUILD.md) on the JDK's HTTP client.
    requires transitive kubernetes.client.api;
    requires kubernetes.model.core;
    requires kubernetes.model.resource;
    requires io.fabric8.kubernetes.client.jdkhttp;
    requires java.net.http;

    exports dev.vgpu.dra.apiserver;
}
