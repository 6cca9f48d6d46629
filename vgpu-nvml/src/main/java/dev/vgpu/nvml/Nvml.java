package dev.vgpu.nvml;

import com.sun.jna.Native;
import dev.vgpu.core.PciAddress;
import dev.vgpu.core.spi.VgpuTypeResolver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One initialized NVML, or the reason there is none. Absent NVML is normal: {@link #open()} never throws
 * and never crashes the JVM; it logs one line and answers {@link #available()} {@code false}. Not API: users hold a
 * {@link RecoveringNvml}, which opens one of these, retries it while it is down and watches its XIDs.
 *
 * <pre>{@code
 * try (Nvml nvml = Nvml.open(Optional.empty())) {            // libnvidia-ml.so.1 via the dynamic linker
 *     log.info(nvml.description());
 *     Host host = Host.of(root).withVgpuTypes(VgpuTypeResolver.memoizing(nvml.vgpuTypeResolver()));
 *     try (XidWatcher xids = XidWatcher.start(nvml, (gpu, xid) -> markUnhealthy(gpu))) { ... }
 * }
 * }</pre>
 *
 * <p>Lifecycle: {@code nvmlInit_v2} runs once in {@code open}, {@code nvmlShutdown} exactly once, after
 * {@link #close()} and after the last call in flight or watcher that still uses NVML has finished (a
 * reference count: the owner holds one reference, every call and every running {@link XidWatcher} one
 * more). {@code close} stops this instance's watchers first. Thread-safe.
 */
final class Nvml implements AutoCloseable {

    /** The soname loaded through the dynamic linker's search (so {@code LD_LIBRARY_PATH} applies). */
    public static final String DEFAULT_LIBRARY = "libnvidia-ml.so.1";
    /** System property naming another library file (a path) or soname; an explicit argument wins over it. */
    public static final String LIBRARY_PROPERTY = "vgpu.nvml.library";

    private static final Logger LOG = LoggerFactory.getLogger(Nvml.class);

    private final String library;
    private final NvmlApi api;
    private final String description;
    // Shared by every thread that calls in; only atomics and a concurrent set.
    private final AtomicInteger references = new AtomicInteger(1);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<XidWatcher> watchers = ConcurrentHashMap.newKeySet();

    private Nvml(String library, NvmlApi api, String description) {
        this.library = library;
        this.api = api;
        this.description = description;
    }

    /** Opens the library named by {@value #LIBRARY_PROPERTY}, or {@value #DEFAULT_LIBRARY}. */
    public static Nvml open() {
        return open(Optional.empty());
    }

    /**
     * Loads and initializes NVML; never throws.
     *
     * @param library a library file to load instead of the {@value #LIBRARY_PROPERTY} property or
     *                {@value #DEFAULT_LIBRARY}
     * @return an available instance, or an unavailable one that says why
     */
    public static Nvml open(Optional<Path> library) {
        Objects.requireNonNull(library, "library");
        Nvml nvml;
        try {
            String target = target(library);
            nvml = initialize(target, load(target));
        } catch (NvmlException e) {
            nvml = notInUse(e);
        } catch (RuntimeException | LinkageError e) {
            nvml = notInUse(new NvmlException(NvmlReturn.LIBRARY_NOT_FOUND, "Nvml.open", String.valueOf(e)));
        }
        LOG.info("{}", nvml.description);
        return nvml;
    }

    /**
     * The null object: NVML not in use.
     *
     * @param reason why, for {@link #description()}, e.g. {@code "disabled by --no-nvml"}
     * @return an instance whose resolver and watchers answer with that reason
     */
    public static Nvml unavailable(String reason) {
        Objects.requireNonNull(reason, "reason");
        return new Nvml("", null, "NVML not in use: " + reason);
    }

    /** True when the library loaded and {@code nvmlInit_v2} succeeded (and {@link #close()} has not run). */
    public boolean available() {
        return api != null && !closed.get();
    }

    /** One line for a startup log, e.g. {@code NVML in use: libnvidia-ml.so.1, 2 GPUs}. */
    public String description() {
        return description;
    }

    /**
     * Names the vGPU types of physical GPUs through NVML; never throws. {@code VgpuTypeNames.unavailable} when
     * this instance is unavailable or closed, or when NVML's error lasts ({@code NVML_ERROR_NOT_SUPPORTED}: a
     * card without vGPU; {@code NVML_ERROR_FUNCTION_NOT_FOUND}: a driver too old); {@code VgpuTypeNames.failed}
     * for any other NVML error (e.g. {@code NVML_ERROR_GPU_IS_LOST}), with the error name.
     * Wrap it in {@link VgpuTypeResolver#memoizing} once per scan so that each physical GPU is asked at most
     * once per scan.
     */
    public VgpuTypeResolver vgpuTypeResolver() {
        return new NvmlVgpuTypeResolver(this);
    }

    /**
     * Whether NVML still answers for one physical GPU: its handle by PCI bus id and its PCI info, two cheap queries
     * that fail once the GPU fell off the bus or the driver lost it; never throws.
     *
     * @return empty when NVML answered for it; otherwise why not, with NVML's error name
     */
    public Optional<String> checkGpu(PciAddress gpu) {
        Objects.requireNonNull(gpu, "gpu");
        Optional<String> notInUse = unavailableReason();
        if (notInUse.isPresent()) {
            return notInUse;
        }
        try (Lease lease = lease()) {
            NvmlApi.PciInfo info = lease.api().pciInfo(lease.api().handleByBusId(gpu.toString()));
            return info.address().equals(gpu) ? Optional.empty()
                    : Optional.of("NVML answers for " + gpu + " with another GPU, " + info.address());
        } catch (NvmlException e) {
            return Optional.of(e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            return Optional.of("NVML_ERROR_UNKNOWN: " + e);
        }
    }

    /** Stops this instance's XID watchers and releases NVML; {@code nvmlShutdown} follows the last call. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (XidWatcher watcher : List.copyOf(watchers)) {
            watcher.close();
        }
        if (api != null) {
            release();
        }
    }

    /**
     * A reference that keeps NVML initialized until closed.
     *
     * @throws NvmlException {@code NVML_ERROR_UNINITIALIZED} when unavailable or closed
     */
    Lease lease() throws NvmlException {
        if (api == null) {
            throw new NvmlException(NvmlReturn.UNINITIALIZED, "Nvml.lease", description);
        }
        while (true) {
            int current = references.get();
            if (current == 0 || closed.get()) {
                throw new NvmlException(NvmlReturn.UNINITIALIZED, "Nvml.lease", "NVML has been closed");
            }
            if (references.compareAndSet(current, current + 1)) {
                return new Lease();
            }
        }
    }

    /** Why calls cannot be made now (unavailable or closed); empty while available. */
    Optional<String> unavailableReason() {
        if (api == null) {
            return Optional.of(description);
        }
        return closed.get() ? Optional.of(NvmlReturn.name(NvmlReturn.UNINITIALIZED) + ": NVML has been closed")
                : Optional.empty();
    }

    /** Registers a running watcher so that {@link #close()} stops it; stops it at once when already closed. */
    void track(XidWatcher watcher) {
        watchers.add(watcher);
        if (closed.get()) {
            watcher.close();
        }
    }

    void untrack(XidWatcher watcher) {
        watchers.remove(watcher);
    }

    /** The library this instance loaded, as a path or soname; empty when unavailable. */
    String library() {
        return library;
    }

    private void release() {
        if (references.decrementAndGet() == 0) {
            try {
                int code = api.shutdown();
                if (code != NvmlReturn.SUCCESS) {
                    LOG.warn("nvmlShutdown returned {} ({})", NvmlReturn.name(code), api.errorString(code));
                }
            } catch (NvmlException e) {
                LOG.warn("NVML could not be shut down: {}", e.getMessage());
            }
        }
    }

    /** One reference to an initialized NVML; close it exactly once (further closes do nothing). */
    final class Lease implements AutoCloseable {
        private final AtomicBoolean released = new AtomicBoolean();

        private Lease() {
        }

        NvmlApi api() {
            return api;
        }

        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                release();
            }
        }
    }

    /**
     * The library to load: the given file, else the {@value #LIBRARY_PROPERTY} property, else
     * {@value #DEFAULT_LIBRARY}.
     *
     * @throws java.nio.file.InvalidPathException when the property is not a usable path
     */
    static String target(Optional<Path> library) {
        return library.map(path -> path.toAbsolutePath().toString()).orElseGet(Nvml::configuredLibrary);
    }

    private static String configuredLibrary() {
        String property = System.getProperty(LIBRARY_PROPERTY);
        if (property == null || property.isBlank()) {
            return DEFAULT_LIBRARY;
        }
        String value = property.strip();
        return value.contains("/") ? Path.of(value).toAbsolutePath().toString() : value;
    }

    /**
     * Loads the library ({@code dlopen}) without initializing it. Cheap to repeat while the file is missing.
     *
     * @throws NvmlException {@code NVML_ERROR_LIBRARY_NOT_FOUND} when it cannot be loaded
     */
    static NvmlApi load(String target) throws NvmlException {
        String dlopen = "dlopen(" + target + ")";
        if (target.contains("/") && !Files.isRegularFile(Path.of(target))) {
            throw new NvmlException(NvmlReturn.LIBRARY_NOT_FOUND, dlopen, "no such file");
        }
        try {
            // Native's class initialization unpacks libjnidispatch and may fail (no writable tmpdir): caught below.
            if (Native.POINTER_SIZE != 8) {
                throw new NvmlException(NvmlReturn.NOT_SUPPORTED, dlopen, "the binding needs a 64-bit JVM");
            }
            return new NvmlApi(Native.load(target, NvmlLibrary.class));
        } catch (LinkageError | RuntimeException e) {
            throw new NvmlException(NvmlReturn.LIBRARY_NOT_FOUND, dlopen, loaderReason(e.getMessage()));
        }
    }

    /**
     * Runs {@code nvmlInit_v2} on a loaded library. A failed init holds no NVML reference, so the same
     * library may be initialized again later without reloading it.
     *
     * @return the instance in use, which owns the reference the successful init took
     * @throws NvmlException when init fails (the driver not loaded yet, no device nodes, no permission)
     */
    static Nvml initialize(String target, NvmlApi api) throws NvmlException {
        int code = api.init();
        // ALREADY_INITIALIZED is deprecated and no longer returned; tolerated as success like go-nvml users do.
        if (code != NvmlReturn.SUCCESS && code != NvmlReturn.ALREADY_INITIALIZED) {
            throw new NvmlException(code, "nvmlInit_v2() of " + target, api.errorString(code)
                    + " (is the NVIDIA driver loaded, are /dev/nvidiactl and /dev/nvidiaN visible?)");
        }
        String devices;
        try {
            int count = api.deviceCount();
            devices = count == 1 ? "1 GPU" : Integer.toUnsignedString(count) + " GPUs";
        } catch (NvmlException e) {
            devices = "GPU count unknown: " + e.getMessage();
        }
        return new Nvml(target, api, "NVML in use: " + target + ", " + devices);
    }

    /** An unavailable instance saying why, e.g. {@code NVML not in use: NVML_ERROR_... from ...}. */
    static Nvml notInUse(NvmlException why) {
        return new Nvml("", null, "NVML not in use: " + why.getMessage());
    }

    /** The loader's reason: JNA puts it on the line after "Unable to load library 'x':". */
    private static String loaderReason(String message) {
        if (message == null || message.isBlank()) {
            return "no reason given";
        }
        String reason = message.strip().lines().map(String::strip).filter(line -> !line.isEmpty()).limit(2)
                .collect(Collectors.joining(" "));
        return reason.length() > 400 ? reason.substring(0, 400) + "…" : reason;
    }
}
