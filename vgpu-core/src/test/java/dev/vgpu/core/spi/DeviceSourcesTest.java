package dev.vgpu.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading sources through {@link java.util.ServiceLoader} on a class loader of its own. */
public class DeviceSourcesTest {

    /** A source with a fixed name and order. */
    abstract static class Named implements DeviceSource {
        private final String name;
        private final int order;

        Named(String name, int order) {
            this.name = name;
            this.order = order;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int order() {
            return order;
        }

        @Override
        public Discovery discover(Host host) {
            return Discovery.empty();
        }
    }

    /** Order 100. */
    public static final class Alpha extends Named {
        /** Loaded by the service loader. */
        public Alpha() {
            super("alpha", 100);
        }
    }

    /** Order 10: runs first. */
    public static final class Beta extends Named {
        /** Loaded by the service loader. */
        public Beta() {
            super("beta", 10);
        }
    }

    /** Order 100, after alpha by name. */
    public static final class Gamma extends Named {
        /** Loaded by the service loader. */
        public Gamma() {
            super("gamma", 100);
        }
    }

    /** Same name and order as {@link Alpha}. */
    public static final class AlphaTwin extends Named {
        /** Loaded by the service loader. */
        public AlphaTwin() {
            super("alpha", 100);
        }
    }

    /** Same name as {@link Gamma}, lower order: it wins. */
    public static final class GammaEarly extends Named {
        /** Loaded by the service loader. */
        public GammaEarly() {
            super("gamma", 50);
        }
    }

    /** Fails in its constructor. */
    public static final class Throwing implements DeviceSource {
        /** Always throws. */
        public Throwing() {
            throw new IllegalStateException("cannot open the lab database");
        }

        @Override
        public String name() {
            return "throwing";
        }

        @Override
        public Discovery discover(Host host) {
            return Discovery.empty();
        }
    }

    /** Its name() throws. */
    public static final class NameThrows extends Named {
        /** Loaded by the service loader. */
        public NameThrows() {
            super("unused", 100);
        }

        @Override
        public String name() {
            throw new UnsupportedOperationException("no name today");
        }
    }

    /** A name that cannot be a source name (whitespace). */
    public static final class BadName extends Named {
        /** Loaded by the service loader. */
        public BadName() {
            super("bad name", 100);
        }
    }

    static ClassLoader loaderWithServices(Path dir, String... providerLines) throws IOException {
        Path services = Files.createDirectories(dir.resolve("META-INF/services"));
        Files.write(services.resolve(DeviceSource.class.getName()), List.of(providerLines));
        return new URLClassLoader(new URL[] {dir.toUri().toURL()}, DeviceSourcesTest.class.getClassLoader());
    }

    static String name(Class<?> type) {
        return type.getName();
    }

    static List<String> names(List<DeviceSource> sources) {
        return sources.stream().map(DeviceSource::name).toList();
    }

    @Test
    void loadsInOrderThenByName(@TempDir Path dir) throws IOException {
        ClassLoader loader = loaderWithServices(dir, name(Gamma.class), "# a comment", name(Alpha.class),
                name(Beta.class));

        assertThat(names(DeviceSources.load(loader, Optional.empty()))).containsExactly("beta", "alpha", "gamma");
    }

    @Test
    void aBrokenProviderIsLoggedAndSkippedWhileTheRestLoad(@TempDir Path dir) throws IOException {
        ClassLoader loader = loaderWithServices(dir, name(Alpha.class), name(Throwing.class),
                "dev.vgpu.no.such.Source", name(NameThrows.class), name(BadName.class), name(Beta.class));

        List<DeviceSource> sources = new ArrayList<>();
        String log = CapturedStderr.of(() -> sources.addAll(DeviceSources.load(loader, Optional.empty())));

        assertThat(names(sources)).containsExactly("beta", "alpha");
        assertThat(log).contains(Throwing.class.getName()).contains("cannot open the lab database")
                .contains("dev.vgpu.no.such.Source")
                .contains(NameThrows.class.getName()).contains("no name today")
                .contains(BadName.class.getName()).contains("\"bad name\"");
    }

    @Test
    void theFirstOfTwoProvidersWithOneNameIsKept(@TempDir Path dir) throws IOException {
        ClassLoader loader = loaderWithServices(dir, name(AlphaTwin.class), name(Gamma.class), name(Alpha.class),
                name(GammaEarly.class));

        List<DeviceSource> sources = new ArrayList<>();
        String log = CapturedStderr.of(() -> sources.addAll(DeviceSources.load(loader, Optional.empty())));

        assertThat(sources).extracting(s -> s.getClass().getSimpleName()).containsExactly("GammaEarly", "AlphaTwin");
        assertThat(log).contains("two device sources are named \"alpha\"")
                .contains("two device sources are named \"gamma\"");
    }

    @Test
    void anAllowListKeepsOnlyTheNamedSources(@TempDir Path dir) throws IOException {
        ClassLoader loader = loaderWithServices(dir, name(Alpha.class), name(Beta.class), name(Gamma.class));

        List<DeviceSource> sources = new ArrayList<>();
        String log = CapturedStderr.of(() -> sources.addAll(
                DeviceSources.load(loader, Optional.of(Set.of("gamma", "beta", "nvml-magic")))));

        assertThat(names(sources)).containsExactly("beta", "gamma");
        assertThat(log).contains("\"nvml-magic\" was asked for but is not on the class or module path");
        assertThat(DeviceSources.load(loader, Optional.of(Set.of()))).isEmpty();
    }

    @Test
    void theNoArgumentLoadUsesTheContextClassLoader(@TempDir Path dir) throws IOException {
        ClassLoader loader = loaderWithServices(dir, name(Gamma.class), name(Beta.class));
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            assertThat(names(DeviceSources.load())).containsExactly("beta", "gamma");
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    @Test
    void noProvidersIsNoSources(@TempDir Path dir) throws IOException {
        assertThat(DeviceSources.load(loaderWithServices(dir), Optional.empty())).isEmpty();
    }

    @Test
    void selectionIsDeterministicWhateverTheDiscoveryOrder() {
        List<DeviceSource> all = List.of(new Alpha(), new Beta(), new Gamma(), new GammaEarly());
        List<DeviceSource> first = DeviceSources.select(all, Optional.empty());
        Random random = new Random(7);

        for (int i = 0; i < 50; i++) {
            List<DeviceSource> shuffled = new ArrayList<>(all);
            Collections.shuffle(shuffled, random);
            assertThat(DeviceSources.select(shuffled, Optional.empty())).isEqualTo(first);
        }
        assertThat(first).extracting(s -> s.getClass().getSimpleName()).containsExactly("Beta", "GammaEarly", "Alpha");
    }

    @Test
    void theSelectionIsImmutable() {
        List<DeviceSource> selected = DeviceSources.select(List.of(new Alpha()), Optional.empty());

        org.assertj.core.api.Assertions.assertThatThrownBy(selected::clear)
                .isInstanceOf(UnsupportedOperationException.class);
    }
}
