package dev.vgpu.daemon.dra;

import dev.vgpu.core.ResourceName;
import dev.vgpu.kubelet.api.transport.UnixDomainTransport;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a device plugin serves a resource on this node: its socket, {@code kubevirt-<name>.sock} (the name this
 * project's device plugin and NVIDIA's upstream plugin both use, or the shortened one a long name gets), is in the
 * kubelet's device-plugin directory. Such a resource is never bridged to an extended-resource claim (docs/DRA.md,
 * "The extended-resource bridge"): the scheduler serves it from the device plugin there, and two sources of
 * {@code PCI_RESOURCE_...} for one container would be ambiguous. The first time a resource is found served, one WARN
 * says so. Kept simple on purpose: a file check at each extended-resource Prepare (the directory is mounted read-only
 * in DRA mode); without the directory it finds nothing.
 *
 * <p>Thread-safe: asked on the DRA plugin's claim-files lane.
 */
final class DevicePluginServed implements Predicate<ResourceName> {

    private static final Logger LOG = LoggerFactory.getLogger(DevicePluginServed.class);

    private final Path dir;
    private final Set<ResourceName> warned = ConcurrentHashMap.newKeySet();

    /** @param dir the kubelet's device-plugin directory, {@code <kubelet-root>/device-plugins} */
    DevicePluginServed(Path dir) {
        this.dir = dir;
    }

    @Override
    public boolean test(ResourceName resource) {
        // The name a device plugin gives its socket here: the full one whenever it fits the path's bytes.
        int room = UnixDomainTransport.MAX_PATH_BYTES - (UnixDomainTransport.pathBytes(dir.resolve("x")) - 1);
        boolean served = resource.socketFileName(room)
                .map(name -> Files.exists(dir.resolve(name), LinkOption.NOFOLLOW_LINKS)).orElse(false);
        if (served && warned.add(resource)) {
            LOG.warn("Resource {} is also served by a device plugin on this node ({} has its socket): an"
                    + " extended-resource claim of it gets no PCI_RESOURCE_/MDEV_PCI_RESOURCE_ environment from this"
                    + " DRA driver (the scheduler serves it from the device plugin here)", resource.fullName(), dir);
        }
        return served;
    }
}
