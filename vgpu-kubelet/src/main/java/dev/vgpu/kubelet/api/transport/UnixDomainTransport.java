package dev.vgpu.kubelet.api.transport;

import io.grpc.Attributes;
import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gRPC over unix domain sockets with grpc-java's shaded Netty transport (epoll), for servers and client channels.
 *
 * <p>Each instance owns one epoll event-loop group and one executor for call callbacks, both shared by every
 * server and channel made from it; their threads start lazily, are named {@code <prefix>-io-N} and
 * {@code <prefix>-rpc-N} (made by a {@link ThreadFactory} the caller may give), and all end in {@link #close()}.
 * Shut servers and channels down before closing. Every server applies the transport's {@link ServerLimits}: a call
 * starts on the event loop, where {@link CallAdmission} moves it to the call threads or refuses it with
 * {@code RESOURCE_EXHAUSTED}, so no call queues without bound (docs/RELIABILITY.md, "The gRPC servers").
 * <pre>{@code
 * try (UnixDomainTransport transport = UnixDomainTransport.create("my-plugin", 1, 2)) {
 *     Server server = transport.serve(dir.resolve("my.sock"), List.of(service));
 *     ManagedChannel channel = transport.dial(dir.resolve("kubelet.sock"));
 *     ...
 * }
 * }</pre>
 * This class is the adapter's internal plumbing, public only so that {@code dev.vgpu.kubelet.standin} can
 * share it; it is not a stable API.
 */
public final class UnixDomainTransport implements AutoCloseable {

    /**
     * The most bytes a unix socket path may have: the kernel's {@code sun_path} holds 108 with the terminating NUL
     * (docs/HOST-FACTS.md §2.4).
     */
    public static final int MAX_PATH_BYTES = 107;
    /** The mode of every socket this transport binds. */
    private static final java.util.Set<java.nio.file.attribute.PosixFilePermission> OWNER_ONLY =
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------");

    private static final Logger LOG = LoggerFactory.getLogger(UnixDomainTransport.class);
    /** The number each connection gets when it is ready, unique within its transport. */
    private static final Attributes.Key<Long> CONNECTION_ATTRIBUTE = Attributes.Key.create("vgpu-connection");
    /** The number of the connection a call came on, in the call's gRPC context ({@link #connection()}). */
    private static final Context.Key<Long> CONNECTION = Context.key("vgpu-connection");

    private final EventLoopGroup eventLoop;
    private final CallThreads executor;
    private final ServerLimits limits;
    private final CallAdmission admission;
    private final AtomicLong connections = new AtomicLong();
    private volatile boolean closing;

    private UnixDomainTransport(EventLoopGroup eventLoop, CallThreads executor, ServerLimits limits) {
        this.eventLoop = eventLoop;
        this.executor = executor;
        this.limits = limits;
        this.admission = new CallAdmission(limits.pendingCalls(), executor);
    }

    /**
     * A transport with its own threads.
     *
     * @param threadNamePrefix  prefix of every thread name, e.g. {@code vgpu-dp-GRID_T4-1Q}
     * @param eventLoopThreads  epoll event-loop threads (1 is plenty for one kubelet)
     * @param executorThreads   threads running call handlers and client callbacks
     * @throws IllegalStateException when epoll is not available on this platform
     */
    public static UnixDomainTransport create(String threadNamePrefix, int eventLoopThreads, int executorThreads) {
        return create(threadNamePrefix, eventLoopThreads, executorThreads, ServerLimits.DEFAULT);
    }

    /**
     * A transport with its own threads whose servers apply {@code limits}.
     *
     * @see #create(String, int, int)
     */
    public static UnixDomainTransport create(String threadNamePrefix, int eventLoopThreads, int executorThreads,
                                             ServerLimits limits) {
        return create(threadNamePrefix, eventLoopThreads, executorThreads, limits, Optional.empty());
    }

    /**
     * A transport whose threads {@code threads} makes: each new, unstarted thread it returns is named
     * {@code <prefix>-io-N} or {@code <prefix>-rpc-N} and made a daemon thread here, then started. An embedder's
     * naming or a test's record of the threads it gave (to see them all end in {@link #close()}).
     *
     * @see #create(String, int, int)
     */
    public static UnixDomainTransport create(String threadNamePrefix, int eventLoopThreads, int executorThreads,
                                             ServerLimits limits, ThreadFactory threads) {
        return create(threadNamePrefix, eventLoopThreads, executorThreads, limits,
                Optional.of(java.util.Objects.requireNonNull(threads, "threads")));
    }

    private static UnixDomainTransport create(String threadNamePrefix, int eventLoopThreads, int executorThreads,
                                              ServerLimits limits, Optional<ThreadFactory> threads) {
        java.util.Objects.requireNonNull(limits, "limits");
        if (eventLoopThreads < 1 || executorThreads < 1) {
            throw new IllegalArgumentException("thread counts must be at least 1, got " + eventLoopThreads + " and "
                    + executorThreads);
        }
        if (!Epoll.isAvailable()) {
            throw new IllegalStateException("unix-socket gRPC needs epoll (Linux x86_64 or aarch64): "
                    + Epoll.unavailabilityCause());
        }
        // By default Netty's own factory for the event loop (its threads make Netty's thread-locals fast).
        ThreadFactory io = threads.map(base -> named(base, threadNamePrefix + "-io"))
                .orElseGet(() -> new DefaultThreadFactory(threadNamePrefix + "-io", true));
        ThreadFactory calls = named(threads.orElse(Thread::new), threadNamePrefix + "-rpc");
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(eventLoopThreads, io, EpollIoHandler.newFactory());
        return new UnixDomainTransport(group, new CallThreads(calls, executorThreads), limits);
    }

    /** Threads of {@code base}, named {@code <prefix>-N} and made daemon threads. Any thread. */
    private static ThreadFactory named(ThreadFactory base, String prefix) {
        AtomicInteger counter = new AtomicInteger();
        return task -> {
            Thread t = java.util.Objects.requireNonNull(base.newThread(task), "the thread factory made no thread");
            t.setName(prefix + "-" + counter.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * What keeps this transport from serving, if anything: a JVM error (an {@code OutOfMemoryError}, Netty's
     * {@code OutOfDirectMemoryError}, a {@code StackOverflowError}) thrown on a call thread, which lost that call
     * and leaves the process in a state nobody can vouch for, or an event loop that ended before {@link #close()}.
     * Once a failure is recorded it stays: a liveness probe that reads it restarts the process
     * (docs/RELIABILITY.md, "The gRPC servers"). Any thread, never waits.
     */
    public Optional<String> failure() {
        String error = executor.failure.get();
        if (error != null) {
            return Optional.of(error);
        }
        if (!closing && eventLoop.isShuttingDown()) {
            return Optional.of("the gRPC event loop ended");
        }
        return Optional.empty();
    }

    /** Calls admitted and pending on the call threads now (for tests). */
    int pendingCalls() {
        return admission.pending();
    }

    /**
     * The connection the calling handler's call came on, a number unique within the transport that serves it (0
     * outside a call): lets a service bound what one connection may hold (the DRA plugin's health streams). Called on
     * the thread that runs the handler.
     */
    public static long connection() {
        Long id = CONNECTION.get();
        return id == null ? 0 : id;
    }

    /**
     * The file key (device and inode) of the socket at {@code socket}, links not followed; null when it is anything
     * else (gone, or a file renamed over it). Compared with the key right after binding, it also tells another
     * process's socket moved there, so a server deletes only the socket it bound. A stat; any thread.
     */
    public static Object socketKey(Path socket) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(socket, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isOther()) {
                return null;
            }
            Object key = attributes.fileKey();
            return key != null ? key : socket;
        } catch (IOException e) {
            return null;
        }
    }

    /** The bytes {@code socket}'s path takes as it is bound or dialled: its text in UTF-8. */
    public static int pathBytes(Path socket) {
        return socket.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * Removes a stale file at {@code socket}, then listens there and serves the services.
     *
     * @throws IOException when the socket cannot be bound, or its path is longer than {@value #MAX_PATH_BYTES}
     *                     bytes (checked before anything is touched, so no file there is deleted)
     */
    public Server serve(Path socket, List<BindableService> services) throws IOException {
        int bytes = pathBytes(socket);
        if (bytes > MAX_PATH_BYTES) {
            throw new IOException("cannot serve on " + socket + ": the path has " + bytes + " bytes, more than the "
                    + MAX_PATH_BYTES + " a unix socket path may have");
        }
        Files.deleteIfExists(socket);
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(eventLoop)
                .workerEventLoopGroup(eventLoop)
                // Calls start on the event loop; the admission moves each admitted one to the call threads and
                // refuses the rest there (CallAdmission).
                .directExecutor()
                .callExecutor(admission)
                // Each connection numbered when ready, its number in every call's context; the admission, added
                // last, still runs first.
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes attributes) {
                        return attributes.toBuilder().set(CONNECTION_ATTRIBUTE, connections.incrementAndGet())
                                .build();
                    }
                })
                .intercept(new ServerInterceptor() {
                    @Override
                    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call,
                            Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                        Long id = call.getAttributes().get(CONNECTION_ATTRIBUTE);
                        return Contexts.interceptCall(Context.current().withValue(CONNECTION, id == null ? 0L : id),
                                call, headers, next);
                    }
                })
                .intercept(admission)
                .maxConcurrentCallsPerConnection(limits.callsPerConnection())
                .maxRstFramesPerWindow(limits.resetsPerWindow(), (int) limits.resetWindow().toSeconds())
                .maxInboundMessageSize(limits.inboundMessageBytes())
                .maxInboundMetadataSize(limits.inboundMetadataBytes())
                .maxConnectionIdle(limits.connectionIdle().toNanos(), TimeUnit.NANOSECONDS)
                // Never cut a connection for its age: the kubelet's one ListAndWatch stream lives on it, and the
                // kubelet marks every device unhealthy when that stream ends.
                .maxConnectionAge(Long.MAX_VALUE, TimeUnit.NANOSECONDS)
                // No pings from the server: a unix socket's peer that goes away is seen at once, and a ping timeout
                // would end the stream of a kubelet that is only stopped for a while.
                .keepAliveTime(Long.MAX_VALUE, TimeUnit.NANOSECONDS)
                // A client that pings more often than every 5 minutes, or without calls, gets GOAWAY.
                .permitKeepAliveTime(5, TimeUnit.MINUTES)
                .permitKeepAliveWithoutCalls(false)
                .handshakeTimeout(10, TimeUnit.SECONDS)
                // gRPC asks for TCP keep-alive, which a unix socket lacks; null removes it (no Netty warning).
                .withChildOption(ChannelOption.SO_KEEPALIVE, null);
        services.forEach(builder::addService);
        Server server;
        try {
            server = builder.build().start();
        } catch (IOException | RuntimeException e) {
            throw new IOException("cannot serve on " + socket + ": " + withCauses(e), e);
        }
        try {
            ownerOnly(socket);
        } catch (IOException | RuntimeException e) {
            server.shutdownNow();
            throw new IOException("cannot make " + socket + " owner-only: " + withCauses(e), e);
        }
        return server;
    }

    /**
     * Serves the services on {@code socket} without the path ever going missing, and so that closing the server
     * never deletes what is at {@code socket} then: binds on a hidden name beside it ({@code .} and random hex digits,
     * no longer than the socket's own name, which the kubelet's plugin watcher ignores), then renames that socket over
     * {@code socket} in one step. Netty deletes the path a server bound when the server closes; here that is the hidden
     * name, long gone, so a socket another process put at {@code socket} meanwhile stays. The caller deletes
     * {@code socket} itself, when it is still the one it bound ({@link #socketKey}).
     *
     * @throws IOException as {@link #serve}, or when the rename fails (the server is shut down again)
     */
    public Server serveReplacing(Path socket, List<BindableService> services) throws IOException {
        int bytes = pathBytes(socket);
        if (bytes > MAX_PATH_BYTES) {
            throw new IOException("cannot serve on " + socket + ": the path has " + bytes + " bytes, more than the "
                    + MAX_PATH_BYTES + " a unix socket path may have");
        }
        int length = Math.max(4, socket.getFileName().toString().length());
        String hex = Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
        Path hidden = socket.resolveSibling("." + hex.substring(0, Math.min(hex.length(), length - 1)));
        Server server = serve(hidden, services);
        try {
            Files.move(hidden, socket, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            server.shutdownNow();
            Files.deleteIfExists(hidden);
            throw new IOException("cannot move the socket bound at " + hidden + " to " + socket + ": "
                    + withCauses(e), e);
        }
        return server;
    }

    /**
     * Sets a bound socket's mode to {@code 0600}: bind creates it with {@code 0777} less the umask, so under umask
     * {@code 000} any local user could connect (docs/RELIABILITY.md, "The kubelet and the sockets"). The kubelet runs
     * as root and needs no more. File systems without POSIX permissions are left as they are.
     */
    private static void ownerOnly(Path socket) throws IOException {
        if (socket.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(socket, OWNER_ONLY);
        }
    }


    /**
     * The message and the distinct messages of its causes: gRPC says "Failed to bind to address" and keeps the
     * operating system's reason ("Permission denied", "Address already in use") in a cause.
     */
    private static String withCauses(Throwable e) {
        StringBuilder out = new StringBuilder(String.valueOf(e.getMessage()));
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Throwable cause = e.getCause(); cause != null && seen.add(cause); cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && !message.isBlank() && out.indexOf(message) < 0) {
                out.append(": ").append(message);
            }
        }
        return out.toString();
    }

    /** A plaintext channel to the socket (authority {@code localhost}, as the kubelet uses); connects lazily. */
    public ManagedChannel dial(Path socket) {
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(eventLoop)
                .executor(executor)
                .offloadExecutor(executor)
                .withOption(ChannelOption.SO_KEEPALIVE, null)
                .overrideAuthority("localhost")
                .usePlaintext()
                .build();
    }

    /**
     * Ends every thread of this transport, waiting a few seconds at most: first the call executor (handlers still
     * queued there may write through the event loop), then the event loop.
     */
    @Override
    public void close() {
        closing = true;
        executor.shutdown();
        boolean interrupted = false;
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            interrupted = true;
        }
        eventLoop.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The call threads: a fixed pool whose queue the admission bounds ({@link CallAdmission}), and which records the
     * first JVM error a task throws. The pool replaces the thread the error ended, so the thread count stays put;
     * the record is what makes the loss visible ({@link #failure()}).
     */
    private static final class CallThreads extends ThreadPoolExecutor {

        private final AtomicReference<String> failure = new AtomicReference<>();

        CallThreads(ThreadFactory named, int threads) {
            super(threads, threads, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), task -> {
                Thread t = named.newThread(task);
                // afterExecute has logged what ends a call thread; nothing else should print it again.
                t.setUncaughtExceptionHandler((thread, e) -> LOG.debug("{} ended: {}", thread.getName(),
                        e.toString()));
                return t;
            });
        }

        @Override
        protected void afterExecute(Runnable task, Throwable thrown) {
            if (thrown == null) {
                return;
            }
            if (thrown instanceof VirtualMachineError && failure.compareAndSet(null,
                    "a gRPC call thread died of " + thrown)) {
                LOG.error("A gRPC call thread died of a JVM error; the call it ran is lost and the process must be "
                        + "restarted: {}", thrown.toString(), thrown);
            } else {
                LOG.error("A gRPC call thread died: {}", thrown.toString(), thrown);
            }
        }
    }
}
