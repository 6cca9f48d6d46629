package dev.vgpu.daemon.ops;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderNames;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderValues;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpMethod;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpObject;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpResponseStatus;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpServerCodec;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpVersion;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's HTTP listener (README, "Metrics and probes"): {@code /metrics} in the Prometheus text format,
 * {@code /healthz} (liveness) and {@code /readyz} (readiness), each answering 200 with {@code ok} or 503 with one
 * line per problem. Only GET and HEAD are answered; every answer closes its connection.
 *
 * <p>The port is on the pod's IP, so any pod that can reach it must not be able to delay the kubelet's probes
 * (docs/RELIABILITY.md, "The ops port"). Hence: the server never blocks on a client. It runs on one non-blocking
 * event loop ({@code vgpu-ops-io}, Netty's epoll transport, the one gRPC already ships in the daemon), reading and
 * writing only what a socket has ready, so a client that sends one byte, or reads nothing, holds no thread. Each
 * connection must deliver its request line and headers within {@link Limits#requestTimeout()} (2 s) and is closed after
 * {@link Limits#connectionLifetime()} (10 s) whatever it did; request lines over {@value #MAX_LINE_BYTES} bytes and headers over
 * {@value #MAX_HEADER_BYTES} bytes are refused. At most {@link Limits#maxWaiting()} (32) connections may be waiting for their
 * request: a new one closes the one that has waited longest, so idle connections can neither exhaust file
 * descriptors nor lock the probes out.
 *
 * <p>Threads: every channel of this server is served by the same single event-loop thread, which alone owns
 * {@link #waiting}; the suppliers given to {@link #start} run on it too and must not block (they read snapshots).
 */
public final class OpsServer implements AutoCloseable {

    /** The event loop's one thread. */
    static final String THREAD_NAME = "vgpu-ops-io";
    static final int MAX_LINE_BYTES = 4096;
    static final int MAX_HEADER_BYTES = 8192;

    /**
     * How long and how many clients may wait.
     *
     * @param requestTimeout     time from accepting a connection to its complete request headers (a probe sends
     *                           them at once)
     * @param connectionLifetime time after which a connection is closed whatever it is doing (a client that never
     *                           reads its answer)
     * @param maxWaiting         connections accepted that have not delivered a request yet
     */
    record Limits(Duration requestTimeout, Duration connectionLifetime, int maxWaiting) {
        /** The daemon's: 2 s, 10 s, 32 (docs/RELIABILITY.md, "The ops port", says why). */
        static final Limits DEFAULT = new Limits(Duration.ofSeconds(2), Duration.ofSeconds(10), 32);

        Limits {
            if (requestTimeout.isNegative() || requestTimeout.isZero() || connectionLifetime.compareTo(requestTimeout) < 0
                    || maxWaiting < 1) {
                throw new IllegalArgumentException("bad ops server limits: " + requestTimeout + ", "
                        + connectionLifetime + ", " + maxWaiting);
            }
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(OpsServer.class);
    private static final String TEXT = "text/plain; charset=utf-8";
    /** At most one WARN about closed connections per this interval. */
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final EventLoopGroup group;
    private final Channel listener;
    private final Routes routes;
    private final Limits limits;
    /** Connections without a request yet, eldest first; owned by the event-loop thread. */
    private final Set<Channel> waiting = new LinkedHashSet<>();
    /** Connections closed for taking too long or for making room, since the last WARN; event-loop thread. */
    private int closedSinceWarn;
    private long lastWarn = System.nanoTime() - WARN_EVERY_NANOS;

    private OpsServer(EventLoopGroup group, Routes routes, Limits limits, InetSocketAddress address)
            throws IOException {
        this.group = group;
        this.routes = routes;
        this.limits = limits;
        ServerBootstrap bootstrap = new ServerBootstrap().group(group, group).channel(EpollServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 64)
                .childOption(ChannelOption.AUTO_READ, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        admit(ch);
                        ch.pipeline().addLast(new HttpServerCodec(MAX_LINE_BYTES, MAX_HEADER_BYTES, 8192),
                                new Exchange());
                    }
                });
        var bound = bootstrap.bind(address).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            Throwable cause = bound.cause();
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause.getMessage()), cause);
        }
        this.listener = bound.channel();
    }

    /**
     * Binds and starts serving.
     *
     * @param address   where to listen
     * @param metrics   what {@code /metrics} writes
     * @param liveness  the problems that make {@code /healthz} fail (empty list: live)
     * @param readiness the problems that make {@code /readyz} fail (empty list: ready)
     * @throws IOException when the address cannot be bound (the message says why, e.g. "Address already in use")
     */
    public static OpsServer start(InetSocketAddress address, Metrics metrics, Supplier<List<String>> liveness,
                                  Supplier<List<String>> readiness) throws IOException {
        return start(address, metrics, liveness, readiness, Limits.DEFAULT);
    }

    /** The same with other limits (tests use shorter or longer waits). */
    static OpsServer start(InetSocketAddress address, Metrics metrics, Supplier<List<String>> liveness,
                           Supplier<List<String>> readiness, Limits limits) throws IOException {
        return start(address, metrics, liveness, readiness, limits, new DefaultThreadFactory(THREAD_NAME, true));
    }

    /**
     * The same with the event-loop thread from {@code threads} (a test's record of the thread it gave): a new,
     * unstarted thread, named {@value #THREAD_NAME} and made a daemon thread here.
     */
    static OpsServer start(InetSocketAddress address, Metrics metrics, Supplier<List<String>> liveness,
                           Supplier<List<String>> readiness, Limits limits, ThreadFactory threads) throws IOException {
        if (!Epoll.isAvailable()) {
            throw new IOException("the ops server needs epoll (Linux x86_64 or aarch64): "
                    + Epoll.unavailabilityCause());
        }
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, task -> {
            Thread t = Objects.requireNonNull(threads.newThread(task), "the thread factory made no thread");
            t.setName(THREAD_NAME);
            t.setDaemon(true);
            return t;
        }, EpollIoHandler.newFactory());
        OpsServer server;
        try {
            server = new OpsServer(group, new Routes(metrics, liveness, readiness), limits, address);
        } catch (IOException | RuntimeException e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            throw e;
        }
        LOG.info("metrics and probes on http://{}:{}/metrics, /healthz, /readyz (request timeout {} s, at most {}"
                + " connections waiting)", address.getHostString(), server.port(),
                limits.requestTimeout().toMillis() / 1000.0, limits.maxWaiting());
        return server;
    }

    /** The port actually bound (useful when 0 was asked for). */
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** Registers a new connection and its deadlines; runs on the event loop. */
    private void admit(Channel ch) {
        countAsWaiting(ch);
        ch.eventLoop().schedule(() -> {
            if (waiting.remove(ch)) {
                drop(ch, "no complete request within " + limits.requestTimeout().toMillis() + " ms");
            }
        }, limits.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        ch.eventLoop().schedule(() -> {
            if (ch.isOpen()) {
                drop(ch, "open longer than " + limits.connectionLifetime().toMillis() + " ms");
            }
        }, limits.connectionLifetime().toMillis(), TimeUnit.MILLISECONDS);
        ch.closeFuture().addListener(f -> waiting.remove(ch));
    }

    /** Counts a connection among the waiting ones, closing the eldest when there are too many. */
    private void countAsWaiting(Channel ch) {
        waiting.add(ch);
        if (waiting.size() > limits.maxWaiting()) {
            Channel eldest = waiting.iterator().next();
            waiting.remove(eldest);
            drop(eldest, "more than " + limits.maxWaiting() + " connections were waiting for their request");
        }
    }

    private void drop(Channel ch, String why) {
        LOG.debug("ops port: closing {}: {}", ch.remoteAddress(), why);
        ch.close();
        closedSinceWarn++;
        long now = System.nanoTime();
        if (now - lastWarn >= WARN_EVERY_NANOS) {
            LOG.warn("ops port: closed {} connection(s) that sent no request in time or waited too long (last: {});"
                    + " probes are not affected", closedSinceWarn, why);
            closedSinceWarn = 0;
            lastWarn = now;
        }
    }

    /** Answers the first request of a connection and closes it; runs on the event loop. */
    private final class Exchange extends SimpleChannelInboundHandler<HttpObject> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject message) {
            if (!(message instanceof HttpRequest request) || !waiting.remove(ctx.channel())) {
                return; // a body, or anything after the answered request: ignored until the close
            }
            Reply reply;
            boolean head = false;
            boolean bad = !request.decoderResult().isSuccess();
            if (bad) {
                reply = new Reply(400, TEXT, "bad request\n".getBytes(StandardCharsets.UTF_8), "");
            } else if (!request.method().equals(HttpMethod.GET) && !request.method().equals(HttpMethod.HEAD)) {
                reply = new Reply(405, TEXT, new byte[0], "GET, HEAD");
            } else {
                head = request.method().equals(HttpMethod.HEAD);
                reply = routes.answer(path(request.uri()));
            }
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.valueOf(reply.status()),
                    head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(reply.body()));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, reply.contentType())
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, reply.body().length)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            if (!reply.allow().isEmpty()) {
                response.headers().set(HttpHeaderNames.ALLOW, reply.allow());
            }
            if (bad) {
                // The client may still be sending the rest: closing now would reset the connection before it reads
                // the answer. Half-close instead; it stays counted as waiting (and closed at its request timeout).
                countAsWaiting(ctx.channel());
                ctx.writeAndFlush(response).addListener(f -> ((SocketChannel) ctx.channel()).shutdownOutput());
            } else {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.debug("ops port: {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }

    private static String path(String uri) {
        int query = uri.indexOf('?');
        return query < 0 ? uri : uri.substring(0, query);
    }

    /**
     * What each path answers.
     *
     * @param metrics   the registry {@code /metrics} writes
     * @param liveness  {@code /healthz}'s problems
     * @param readiness {@code /readyz}'s problems
     */
    private record Routes(Metrics metrics, Supplier<List<String>> liveness, Supplier<List<String>> readiness) {
        Reply answer(String path) {
            try {
                return switch (path) {
                    case "/metrics" -> {
                        ByteArrayOutputStream body = new ByteArrayOutputStream(8192);
                        metrics.write(body);
                        yield new Reply(200, Metrics.contentType(), body.toByteArray(), "");
                    }
                    case "/healthz" -> probe(liveness.get());
                    case "/readyz" -> probe(readiness.get());
                    default -> new Reply(404, TEXT, "not found: try /metrics, /healthz or /readyz\n"
                            .getBytes(StandardCharsets.UTF_8), "");
                };
            } catch (IOException | RuntimeException e) {
                LOG.warn("{} failed: {}", path, e.toString());
                return new Reply(500, TEXT, ("error: " + e + "\n").getBytes(StandardCharsets.UTF_8), "");
            }
        }

        private static Reply probe(List<String> problems) {
            String text = problems.isEmpty() ? "ok\n" : String.join("\n", problems) + "\n";
            return new Reply(problems.isEmpty() ? 200 : 503, TEXT, text.getBytes(StandardCharsets.UTF_8), "");
        }
    }

    /**
     * One answer.
     *
     * @param allow the {@code Allow} header, empty for none
     */
    private record Reply(int status, String contentType, byte[] body, String allow) {
    }

    @Override
    public void close() {
        listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
