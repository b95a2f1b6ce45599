package dev.dlock.spring;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A {@code redis-server} process of this test run, on a free port, without persistence. */
final class RedisServerProcess implements AutoCloseable {
    private final Process process;
    private final int port;

    private RedisServerProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static RedisServerProcess start() throws Exception {
        return start(null);
    }

    /** A server that requires a password (AUTH), or none when null. */
    static RedisServerProcess start(String password) throws Exception {
        int port = freePort();
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
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
            command.addAll(java.util.List.of("--requirepass", password));
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
        RedisServerProcess server = new RedisServerProcess(process, port);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!server.answersPing()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                server.close();
                throw new IllegalStateException("redis-server did not start on port " + port);
            }
            Thread.sleep(20);
        }
        return server;
    }

    /** A port nothing listens on right now. */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    int port() {
        return port;
    }

    private boolean answersPing() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = in.readNBytes(7);
            String answer = new String(reply, StandardCharsets.US_ASCII);
            return answer.equals("+PONG\r\n") || answer.startsWith("-NOAUTH");
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
