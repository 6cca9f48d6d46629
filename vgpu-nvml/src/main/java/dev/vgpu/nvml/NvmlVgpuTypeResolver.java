package dev.vgpu.nvml;

import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeNames;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The vGPU profile names one physical GPU supports, from NVML: the handle by the PF's PCI bus id, its
 * supported type ids ({@code nvmlDeviceGetSupportedVgpus}, which unlike the creatable list does not shrink
 * as the card fills up), then {@code nvmlVgpuTypeGetName} per id. All or nothing per PF. The three answers:
 * <ul>
 * <li>{@link VgpuTypeNames#of}: NVML listed the card's types; a type id missing from the list is one the
 *     card does not support, not an error;</li>
 * <li>{@link VgpuTypeNames#unavailable}: NVML is not in use (absent, disabled, down or closed), or it says
 *     something that lasts: {@code NVML_ERROR_NOT_SUPPORTED} (a card without vGPU support, or a call the
 *     card cannot serve) or {@code NVML_ERROR_FUNCTION_NOT_FOUND} (a driver too old for this binding). Asking
 *     again will not help, so a scan treats the card as if NVML were absent for it, rather than keeping its
 *     former devices for ever;</li>
 * <li>{@link VgpuTypeNames#failed}: any other NVML error, e.g. {@code NVML_ERROR_GPU_IS_LOST} or
 *     {@code NVML_ERROR_NOT_FOUND} on the handle lookup: NVML is in use but could not answer this time, and
 *     the answer says nothing about the card (a scan keeps what the card had).</li>
 * </ul>
 *
 * <p>Holds no state and no cache: every answer comes from the PF it was asked about, never from another
 * card (type ids are card-local). Per-scan caching is {@link VgpuTypeResolver#memoizing}'s job.
 */
final class NvmlVgpuTypeResolver implements VgpuTypeResolver {

    /** Enough for the cards seen so far in one call; larger lists take the INSUFFICIENT_SIZE retry. */
    static final int FIRST_CAPACITY = 32;

    private static final Logger LOG = LoggerFactory.getLogger(NvmlVgpuTypeResolver.class);

    private final Nvml nvml;

    NvmlVgpuTypeResolver(Nvml nvml) {
        this.nvml = nvml;
    }

    @Override
    public VgpuTypeNames supportedTypes(PciAddress physicalFunction) {
        if (physicalFunction == null) {
            return VgpuTypeNames.unavailable("no physical function given");
        }
        var notInUse = nvml.unavailableReason();
        if (notInUse.isPresent()) {
            return VgpuTypeNames.unavailable(notInUse.get());
        }
        try (Nvml.Lease lease = nvml.lease()) {
            NvmlApi api = lease.api();
            String pf = physicalFunction.toString();
            NvmlApi.Device device = api.handleByBusId(pf);
            Map<Long, String> names = new TreeMap<>();
            for (int id : api.supportedVgpus(device, pf, FIRST_CAPACITY)) {
                long typeId = Integer.toUnsignedLong(id);
                if (!names.containsKey(typeId)) {
                    names.put(typeId, api.vgpuTypeName(id));
                }
            }
            LOG.debug("NVML names {} vGPU types of physical GPU {}", names.size(), pf);
            return VgpuTypeNames.of(names);
        } catch (NvmlException e) {
            LOG.debug("NVML cannot name the vGPU types of physical GPU {}: {}", physicalFunction, e.getMessage());
            return lasting(e.returnCode()) ? VgpuTypeNames.unavailable(e.getMessage())
                    : VgpuTypeNames.failed(e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            LOG.warn("NVML failed unexpectedly for physical GPU {}", physicalFunction, e);
            return VgpuTypeNames.failed("NVML_ERROR_UNKNOWN: " + e);
        }
    }

    /** Errors that describe the card or the driver, not this moment: asking again gives the same answer. */
    private static boolean lasting(int returnCode) {
        return returnCode == NvmlReturn.NOT_SUPPORTED || returnCode == NvmlReturn.FUNCTION_NOT_FOUND;
    }
}
