package dev.vgpu.core;

import dev.vgpu.core.spi.Discovery;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What an operator says about devices, applied to what every source (custom ones too) found, before snapshots are
 * built and compared: excluded devices are never advertised (each one a skip saying {@value #EXCLUDED}), and the
 * first rename rule that matches a device gives its resource name. A device that moves to another name is a
 * removal from the old resource and an addition to the new one when the next snapshot is reconciled.
 * <pre>{@code
 * DeviceRules rules = new DeviceRules(
 *         List.of(new RenameRule(DeviceMatch.source("passthrough"), new ResourceName("pgpu"))),
 *         List.of(DeviceMatch.address("0000:65:00.0")));
 * Scanner scanner = new Scanner(host, DeviceSources.load(), () -> rules);
 * }</pre>
 * Rules see a device as its source found it: a rename never feeds another rule, and an exclusion wins over any
 * rename.
 *
 * @param renames    rename rules, the first match wins
 * @param exclusions devices never advertised
 */
public record DeviceRules(List<RenameRule> renames, List<DeviceMatch> exclusions) {

    /** The skip reason of an excluded device. */
    public static final String EXCLUDED = "excluded by the configuration";

    private static final DeviceRules NONE = new DeviceRules(List.of(), List.of());

    /** Copies both lists. */
    public DeviceRules {
        renames = List.copyOf(renames);
        exclusions = List.copyOf(exclusions);
    }

    /** No renames, no exclusions: every device as its source names it. */
    public static DeviceRules none() {
        return NONE;
    }

    /** Whether these rules change nothing. */
    public boolean isEmpty() {
        return renames.isEmpty() && exclusions.isEmpty();
    }

    /**
     * One source's discovery with these rules applied.
     *
     * @param discovery what the source found
     * @param deviceId  the PCI device id of a device (its function's, or an mdev's parent's), four lowercase hex
     *                  digits; asked only when a rule names a device id; empty when it cannot be told (then no
     *                  device-id rule matches that device)
     * @return the devices left, renamed, and the source's skips followed by one per excluded device
     */
    public Discovery apply(Discovery discovery, Function<Device, Optional<String>> deviceId) {
        if (isEmpty()) {
            return discovery;
        }
        Discovery.Builder out = Discovery.builder();
        discovery.skipped().forEach(out::skip);
        for (Device device : discovery.devices()) {
            if (exclusions.stream().anyMatch(m -> m.matches(device, deviceId))) {
                out.skip(device.id(), device.source(), EXCLUDED);
                continue;
            }
            Optional<ResourceName> renamed = renames.stream().filter(r -> r.match().matches(device, deviceId))
                    .findFirst().map(RenameRule::name);
            out.add(renamed.isPresent() ? device.withResource(renamed.get()) : device);
        }
        return out.unlisted(discovery.unlistedSkips()).build();
    }
}
