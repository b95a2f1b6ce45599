package dev.dlock.redis;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal blocking RESP2 client for test administration (PING, INFO, CONFIG, MONITOR, DEBUG), so that
 * tests observe the server without going through the library under test.
 */
final class Resp implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private Resp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    static Resp connect(int port) {
        try {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            socket.setSoTimeout(10_000);
            return new Resp(socket);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot connect to 127.0.0.1:" + port, e);
        }
    }

    /** One command and its reply; an error reply throws. */
    static Object call(int port, String... command) {
        try (Resp resp = connect(port)) {
            return resp.call(command);
        }
    }

    Object call(String... command) {
        send(command);
        return read();
    }

    void send(String... command) {
        try {
            StringBuilder b =
                    new StringBuilder().append('*').append(command.length).append("\r\n");
            for (String part : command) {
                byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
                b.append('$').append(bytes.length).append("\r\n").append(part).append("\r\n");
            }
            out.write(b.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void timeout(int millis) {
        try {
            socket.setSoTimeout(millis);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Object read() {
        try {
            String line = line();
            char type = line.charAt(0);
            String rest = line.substring(1);
            switch (type) {
                case '+':
                    return rest;
                case '-':
                    throw new IllegalStateException("Redis error: " + rest);
                case ':':
                    return Long.parseLong(rest);
                case '$': {
                    int length = Integer.parseInt(rest);
                    if (length < 0) {
                        return null;
                    }
                    byte[] data = in.readNBytes(length + 2);
                    return new String(data, 0, length, StandardCharsets.UTF_8);
                }
                case '*': {
                    int count = Integer.parseInt(rest);
                    if (count < 0) {
                        return null;
                    }
                    List<Object> items = new ArrayList<>(count);
                    for (int i = 0; i < count; i++) {
                        items.add(read());
                    }
                    return items;
                }
                default:
                    throw new IllegalStateException("unexpected RESP line: " + line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String line() throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\r') {
                in.read();
                return b.toString();
            }
            b.append((char) c);
        }
        throw new IOException("connection closed by the server");
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a test connection
        }
    }
}
