package dev.dlock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A loopback TCP forwarder that counts the requests clients send to a store, so that the held scenario
 * measures every system's renewal traffic the same way, from the wire, whatever else uses the shared
 * server.
 *
 * <p>Concurrency: one accept thread, and two daemon threads per connection (one per direction), all named
 * {@code bench-proxy-*} so that the held scenario can leave them out of its thread counts. The request
 * count is an {@link AtomicLong}.
 *
 * <p>Failure modes: when either side closes or fails, both sockets of that connection are closed.
 * {@link #close()} closes the listening socket and every connection.
 */
final class CountingProxy implements AutoCloseable {
    static final String THREAD_PREFIX = "bench-proxy-";

    private final ServerSocket listener;
    private final Endpoints.HostPort target;
    private final Supplier<Framers.Framer> framers;
    private final AtomicLong requests = new AtomicLong();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private CountingProxy(ServerSocket listener, Endpoints.HostPort target, Supplier<Framers.Framer> framers) {
        this.listener = listener;
        this.target = target;
        this.framers = framers;
    }

    static CountingProxy start(Endpoints.HostPort target, Supplier<Framers.Framer> framers) throws IOException {
        ServerSocket listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        CountingProxy proxy = new CountingProxy(listener, target, framers);
        Thread accept = new Thread(proxy::acceptLoop, THREAD_PREFIX + "accept");
        accept.setDaemon(true);
        accept.start();
        return proxy;
    }

    Endpoints.HostPort address() {
        return new Endpoints.HostPort("127.0.0.1", listener.getLocalPort());
    }

    long requests() {
        return requests.get();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(new InetSocketAddress(target.host(), target.port()), 5000);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, framers.get());
                pump(server, client, null);
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("[bench] proxy to " + target + ": " + e);
                }
            }
        }
    }

    private void pump(Socket from, Socket to, Framers.Framer framer) {
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            if (framer != null) {
                                requests.addAndGet(framer.feed(buffer, 0, n));
                            }
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException | RuntimeException e) {
                        // The connection ended; close both sides below.
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                THREAD_PREFIX + (framer != null ? "up" : "down"));
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // Already closed.
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // Already closed.
        }
        sockets.forEach(CountingProxy::closeQuietly);
    }
}
