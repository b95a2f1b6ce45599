package dev.dlock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A TCP forwarder for fault tests: put it between a client and a real server, then {@link #cut()} to
 * make the server unreachable and {@link #restore()} to bring it back, without touching a server that
 * others share.
 *
 * <p>While cut, existing connections are closed and new ones are accepted but never forwarded (a
 * black hole: the client's requests get no answer, as with a dead host), so clients exercise their
 * timeouts rather than a quick "connection refused". {@link #freeze()} is the silent variant: existing
 * connections stay open but every byte sent either way is dropped, as when a network path dies without a
 * reset; only timeouts can tell.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.start("127.0.0.1", 5432)) {
 *     String url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/test";
 *     proxy.cut();
 *     proxy.restore();
 * }
 * }</pre>
 *
 * <p>A {@link Tap} sees the bytes each connection sends towards the server, in order, before they are
 * forwarded: the benchmark counts a store's requests from the wire with one.
 *
 * <p>Concurrency: one accept thread, and two pump threads per forwarded connection, all daemon threads
 * whose names start with {@link #THREAD_PREFIX}; {@link #close()} stops them all.
 */
public final class TcpProxy implements AutoCloseable {
    /** The name prefix of every thread a proxy starts. */
    public static final String THREAD_PREFIX = "tcp-proxy-";

    /** Sees the bytes one forwarded connection sends towards the server; called by one thread. */
    @FunctionalInterface
    public interface Tap {
        /**
         * Called with each chunk read from the client, before it is forwarded.
         *
         * @param buffer the bytes
         * @param offset where they start
         * @param length how many
         */
        void clientBytes(byte[] buffer, int offset, int length);
    }

    private static final Tap NO_TAP = (buffer, offset, length) -> {};

    private final String targetHost;
    private final int targetPort;
    private final Supplier<? extends Tap> taps;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean cut;
    private volatile boolean frozen;
    private volatile boolean closed;

    private TcpProxy(String targetHost, int targetPort, Supplier<? extends Tap> taps) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.taps = taps;
        this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptLoop, THREAD_PREFIX + "accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a proxy on a free loopback port forwarding to the target.
     *
     * @param targetHost the real server's host
     * @param targetPort the real server's port
     * @return the running proxy
     * @throws IOException if no port could be bound
     */
    public static TcpProxy start(String targetHost, int targetPort) throws IOException {
        return new TcpProxy(targetHost, targetPort, () -> NO_TAP);
    }

    /**
     * Starts a proxy on a free loopback port forwarding to the target, with a tap on each connection.
     *
     * @param targetHost the real server's host
     * @param targetPort the real server's port
     * @param taps makes the tap of each new connection
     * @return the running proxy
     * @throws IOException if no port could be bound
     */
    public static TcpProxy start(String targetHost, int targetPort, Supplier<? extends Tap> taps) throws IOException {
        return new TcpProxy(targetHost, targetPort, taps);
    }

    /**
     * The port clients should connect to.
     *
     * @return the proxy's loopback port
     */
    public int port() {
        return server.getLocalPort();
    }

    /** Closes every forwarded connection and black-holes new ones until {@link #restore()}. */
    public void cut() {
        cut = true;
        closeAll();
    }

    /**
     * Silently drops every byte in both directions while keeping every connection open, and black-holes
     * new connections, until {@link #restore()}.
     */
    public void freeze() {
        frozen = true;
    }

    /** Forwards new connections again (clients must reconnect). */
    public void restore() {
        cut = false;
        frozen = false;
        // Black-holed connections accepted during the cut are dropped, so clients reconnect.
        closeAll();
    }

    private void closeAll() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            sockets.add(client);
            if (cut || frozen) {
                continue; // black hole: keep it open, forward nothing
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(upstream);
            setNoDelay(client, upstream);
            pump(client, upstream, taps.get());
            pump(upstream, client, NO_TAP);
        }
    }

    private static void setNoDelay(Socket... sockets) {
        for (Socket s : sockets) {
            try {
                s.setTcpNoDelay(true);
            } catch (IOException ignored) {
                // the connection already ended; its pump ends it here too
            }
        }
    }

    private void pump(Socket from, Socket to, Tap tap) {
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            if (cut) {
                                break;
                            }
                            if (frozen) {
                                continue; // dropped without a trace
                            }
                            tap.clientBytes(buffer, 0, n);
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException | RuntimeException e) {
                        // connection closed by either side or by cut(), or the tap failed
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                        sockets.remove(from);
                        sockets.remove(to);
                    }
                },
                THREAD_PREFIX + "pump-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    /** Stops the proxy and closes every connection. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
        closeAll();
        try {
            acceptor.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
