package dev.dlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records every command a server executes ({@code MONITOR}), from a background thread, so a test can
 * count the round trips a client made. Commands run inside scripts are marked {@code [... lua]} by the
 * server and are left out: only commands that arrived over the network are kept.
 */
final class Monitor implements AutoCloseable {
    private final Resp connection;
    private final Thread reader;
    private final List<String> commands = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private Monitor(int port) {
        connection = Resp.connect(port);
        connection.timeout(0);
        if (!"OK".equals(connection.call("MONITOR"))) {
            throw new IllegalStateException("MONITOR was refused");
        }
        reader = new Thread(this::read, "monitor-" + port);
        reader.setDaemon(true);
        reader.start();
    }

    static Monitor start(int port) {
        return new Monitor(port);
    }

    private void read() {
        while (!closed) {
            Object line;
            try {
                line = connection.read();
            } catch (RuntimeException e) {
                return;
            }
            if (line instanceof String text && !text.contains(" lua] ")) {
                commands.add(text);
            }
        }
    }

    /** Commands seen so far whose name (upper case) is {@code name}; each a raw MONITOR line. */
    List<String> commands(String name) {
        List<String> result = new ArrayList<>();
        for (String line : commands) {
            if (name.equals(commandName(line))) {
                result.add(line);
            }
        }
        return result;
    }

    /** Every network command seen so far, by name. */
    List<String> names() {
        List<String> result = new ArrayList<>();
        for (String line : commands) {
            result.add(commandName(line));
        }
        return result;
    }

    void clear() {
        commands.clear();
    }

    /** Waits until the server has executed (and the monitor seen) a marker command sent by the test. */
    void sync(int port) {
        String marker = "monitor-sync-" + System.nanoTime();
        Resp.call(port, "ECHO", marker);
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (commands.stream().noneMatch(l -> l.contains(marker))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("MONITOR did not show the marker");
            }
            RedisServer.sleep(5);
        }
        commands.removeIf(l -> l.contains(marker));
    }

    private static String commandName(String line) {
        int start = line.indexOf("] \"");
        if (start < 0) {
            return "";
        }
        int end = line.indexOf('"', start + 3);
        return line.substring(start + 3, end).toUpperCase();
    }

    /** The script operation (first ARGV) of an FCALL, EVALSHA or EVAL line. */
    static String scriptOperation(String line) {
        List<String> args = arguments(line);
        int keyCount = Integer.parseInt(args.get(2));
        return args.get(3 + keyCount);
    }

    /** The quoted arguments of a MONITOR line, the command name first. */
    static List<String> arguments(String line) {
        List<String> args = new ArrayList<>();
        int i = line.indexOf("] ") + 2;
        while (i < line.length()) {
            if (line.charAt(i) != '"') {
                i++;
                continue;
            }
            StringBuilder arg = new StringBuilder();
            i++;
            while (line.charAt(i) != '"') {
                if (line.charAt(i) == '\\') {
                    i++;
                }
                arg.append(line.charAt(i));
                i++;
            }
            args.add(arg.toString());
            i++;
        }
        return args;
    }

    @Override
    public void close() {
        closed = true;
        connection.close();
    }
}
