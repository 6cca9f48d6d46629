package dev.vgpu.dra;

import dev.vgpu.core.internal.Printable;
import dev.vgpu.dra.grpc.registration.InfoRequest;
import dev.vgpu.dra.grpc.registration.PluginInfo;
import dev.vgpu.dra.grpc.registration.RegistrationGrpc;
import dev.vgpu.dra.grpc.registration.RegistrationStatus;
import dev.vgpu.dra.grpc.registration.RegistrationStatusResponse;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code pluginregistration.Registration} on {@code <driver>-reg.sock} (docs/DRA.md §1): tells the kubelet's
 * plugin watcher that a {@code DRAPlugin} of this driver serves {@code v1} and then {@code v1beta1} on its DRA
 * socket (and, when it serves them, the {@code DRAResourceHealth} versions), and hands the kubelet's verdict to a
 * listener (which posts it to the plugin's owner). Stateless; runs on gRPC's threads.
 */
final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {

    /** The service versions on the DRA socket, the preferred first: the kubelet takes the first it knows. */
    static final List<String> SUPPORTED_VERSIONS = List.of("v1.DRAPlugin", "v1beta1.DRAPlugin");
    /** The health service versions, listed after the DRAPlugin ones when the plugin serves them. */
    static final List<String> HEALTH_VERSIONS = List.of("v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth");

    private static final Logger LOG = LoggerFactory.getLogger(RegistrationService.class);

    private final PluginInfo info;
    private final Consumer<KubeletRegistration> verdicts;

    RegistrationService(PluginPaths paths, List<String> versions, Consumer<KubeletRegistration> verdicts) {
        this.info = PluginInfo.newBuilder().setType("DRAPlugin").setName(paths.driver().value())
                .setEndpoint(paths.draSocket().toString()).addAllSupportedVersions(versions).build();
        this.verdicts = verdicts;
    }

    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> observer) {
        observer.onNext(info);
        observer.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(RegistrationStatus status,
                                         StreamObserver<RegistrationStatusResponse> observer) {
        if (status.getPluginRegistered()) {
            LOG.info("The kubelet registered DRA driver {} at {}", info.getName(), info.getEndpoint());
            verdicts.accept(new KubeletRegistration.Registered());
        } else {
            // The kubelet's words, escaped and cut: they reach the log and the readiness probe.
            String error = Printable.of(status.getError(), 500);
            LOG.error("The kubelet refused DRA driver {}: {}", info.getName(), error);
            verdicts.accept(new KubeletRegistration.Rejected(error));
        }
        observer.onNext(RegistrationStatusResponse.getDefaultInstance());
        observer.onCompleted();
    }
}
