package dev.dlock.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} process of one test on a free loopback port, without persistence, maybe with a
 * password: for the tests of modules that use Redis through a URI (the CLI, the Spring Boot starter).
 * The Redis backend's own tests have a richer launcher (kill, restart, freeze, Sentinel, Cluster).
 *
 * <pre>{@code
 * try (RedisProcess redis = RedisProcess.start(null)) {
 *     LockClient client = LockClient.connect(redis.uri());
 * }
 * }</pre>
 */
public final class RedisProcess implements AutoCloseable {
    private final Process process;
    private final int port;

    private RedisProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts a server and waits until it answers, at most 20 seconds.
     *
     * @param password the password it requires ({@code requirepass}), or null for none
     * @return the running server
     * @throws IllegalStateException when {@code redis-server} is not installed or does not come up
     * @throws IOException when no free port can be found
     * @throws InterruptedException when interrupted while waiting
     */
    public static RedisProcess start(String password) throws IOException, InterruptedException {
        int port = freePort();
        List<String> command = new ArrayList<>(List.of(
                "redis-server",
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no"));
        if (password != null) {
            command.addAll(List.of("--requirepass", password));
        }
        Process process;
        try {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run redis-server (install it: apt-get install redis-server; scripts/test.sh does)", e);
        }
        RedisProcess redis = new RedisProcess(process, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!redis.answersPing()) {
            if (System.nanoTime() - deadline > 0 || !process.isAlive()) {
                redis.close();
                throw new IllegalStateException("redis-server did not start on port " + port);
            }
            Thread.sleep(20);
        }
        return redis;
    }

    /**
     * A loopback port nothing listens on right now.
     *
     * @return the port
     * @throws IOException when no port can be bound
     */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /**
     * The server's port on 127.0.0.1.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * The server's URI without credentials.
     *
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** PONG, or NOAUTH from a server with a password, means the server is up. */
    private boolean answersPing() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String answer = new String(in.readNBytes(7), StandardCharsets.US_ASCII);
            return answer.equals("+PONG\r\n") || answer.startsWith("-NOAUTH");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Stops the server, forcibly if it has not ended within 5 seconds.
     *
     * @throws InterruptedException when interrupted while waiting for it to end
     */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
