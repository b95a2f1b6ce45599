package dev.dlock.cli;

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

/** A {@code redis-server} of one test on a free loopback port, without persistence, maybe with a password. */
final class RedisProcess implements AutoCloseable {
    private final Process process;
    final int port;

    private RedisProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static RedisProcess start(String password) throws Exception {
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
        while (!redis.answers()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                redis.close();
                throw new IllegalStateException("redis-server did not start on port " + port);
            }
            Thread.sleep(20);
        }
        return redis;
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Any answer to PING (PONG, or NOAUTH with a password) means the server is up. */
    private boolean answers() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return in.read() > 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
