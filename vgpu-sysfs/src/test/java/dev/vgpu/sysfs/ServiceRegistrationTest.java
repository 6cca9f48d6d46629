package dev.vgpu.sysfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.vgpu.core.spi.DeviceSource;
import dev.vgpu.core.spi.DeviceSources;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The sources load on the class path (META-INF/services) and are declared in module-info for the module path. */
class ServiceRegistrationTest {

    @Test
    void deviceSourcesLoadAllThreeInOrder() {
        List<DeviceSource> sources = DeviceSources.load();

        assertThat(sources).extracting(DeviceSource::name).containsSubsequence("passthrough", "mdev", "vendor-vfio");
        assertThat(sources).extracting(DeviceSource::order).containsSubsequence(10, 20, 30);
    }

    @Test
    void serviceLoaderFindsEachClass() {
        assertThat(ServiceLoader.load(DeviceSource.class).stream().map(p -> p.type().getName()))
                .contains(PassthroughSource.class.getName(), MdevSource.class.getName(),
                        VendorVfioSource.class.getName());
    }

    @Test
    void moduleDescriptorProvidesAllThree() throws Exception {
        Path classes = Path.of(PassthroughSource.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ModuleDescriptor descriptor = ModuleFinder.of(classes).find("dev.vgpu.sysfs").orElseThrow().descriptor();

        assertThat(descriptor.provides()).singleElement().satisfies(p -> {
            assertThat(p.service()).isEqualTo(DeviceSource.class.getName());
            assertThat(p.providers()).containsExactly(PassthroughSource.class.getName(), MdevSource.class.getName(),
                    VendorVfioSource.class.getName());
        });
        // API to everyone: the sources' package only; the table parser is shared with the configurator alone.
        assertThat(descriptor.exports()).filteredOn(e -> !e.isQualified())
                .extracting(ModuleDescriptor.Exports::source).containsExactly("dev.vgpu.sysfs");
        assertThat(descriptor.exports()).filteredOn(ModuleDescriptor.Exports::isQualified)
                .extracting(ModuleDescriptor.Exports::source, ModuleDescriptor.Exports::targets)
                .containsExactly(tuple("dev.vgpu.sysfs.internal",
                        Set.of("dev.vgpu.configurator")));
    }

    @Test
    void namesAndOrdersAreStable() {
        assertThat(new PassthroughSource().name()).isEqualTo(PassthroughSource.NAME).isEqualTo("passthrough");
        assertThat(new MdevSource().name()).isEqualTo(MdevSource.NAME).isEqualTo("mdev");
        assertThat(new VendorVfioSource().name()).isEqualTo(VendorVfioSource.NAME).isEqualTo("vendor-vfio");
        assertThat(List.of(new PassthroughSource().order(), new MdevSource().order(), new VendorVfioSource().order()))
                .containsExactly(10, 20, 30);
    }
}
