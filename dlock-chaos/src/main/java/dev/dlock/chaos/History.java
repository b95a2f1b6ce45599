package dev.dlock.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The controller's record of one store's run: the events the clients report over their sockets, each
 * stamped with the controller's monotonic clock on arrival (one clock for every client, whatever their
 * own clocks were stepped to), and the faults the nemesis injected.
 *
 * <p>Concurrency: one reader thread per client connection appends under this object's lock. A reader
 * that fails on a line (anything but its client going away) is recorded, and {@link #requireReaders()}
 * fails the run with it: a reader that ended silently would leave its client's events out of the
 * checks, and the run would look like a client that stopped reporting.
 */
final class History implements AutoCloseable {
    /**
     * One client event.
     *
     * @param at controller time of arrival, ms since the run started
     * @param client the client id
     * @param type invoke, grant, deadline, lost, valid, told, claim_ok, claim_rejected, write_ok, write_rejected,
     *     unfenced, releasing (before the store call), release, timeout, fail, ...
     * @param lock the lock name ({@code x}, {@code rw}, {@code sem})
     * @param section the critical section id
     * @param token the fencing token, 0 before the grant
     * @param detail free text
     * @param wall the client's wall clock, ms
     * @param mono the client's monotonic clock, ns
     */
    record Event(
            long at,
            int client,
            String type,
            String lock,
            String section,
            long token,
            String detail,
            long wall,
            long mono) {}

    /**
     * One injected fault.
     *
     * @param fault the kind
     * @param target what it hit
     * @param client the client it hit, or -1 for the store
     * @param start controller time of injection, ms
     * @param end controller time of healing, ms (-1 while in effect)
     */
    record FaultRecord(Fault fault, String target, int client, long start, long end) {}

    private final long origin = System.nanoTime();
    private final ServerSocket server;
    private final List<Event> events = new ArrayList<>();
    private final List<FaultRecord> faults = new ArrayList<>();
    private final Map<Integer, OutputStream> controls = new ConcurrentHashMap<>();
    private volatile String readerFailure;

    History(String host) {
        try {
            server = new ServerSocket(0, 50, InetAddress.getByName(host));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "chaos-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String address() {
        return server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
    }

    long now() {
        return (System.nanoTime() - origin) / 1_000_000;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Thread reader = new Thread(() -> read(socket), "chaos-read");
                reader.setDaemon(true);
                reader.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void read(Socket socket) {
        String line = null;
        try (socket;
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
            while ((line = in.readLine()) != null) {
                record(line, socket);
            }
        } catch (IOException e) {
            // the client died or was killed
        } catch (RuntimeException e) {
            readerFailed(line, e);
        }
    }

    private void record(String line, Socket socket) throws IOException {
        String[] f = line.split("\t", -1);
        if (f.length < 8) {
            throw new IllegalArgumentException("expected 8 tab-separated fields, found " + f.length);
        }
        int client = Integer.parseInt(f[0]);
        if (f[1].equals("hello")) {
            controls.put(client, socket.getOutputStream());
        }
        Event e = new Event(
                now(),
                client,
                f[1],
                f[2],
                f[3],
                Long.parseLong(f[4]),
                f[5],
                Long.parseLong(f[6]),
                Long.parseLong(f[7]));
        synchronized (this) {
            events.add(e);
        }
    }

    private void readerFailed(String line, RuntimeException cause) {
        String failure = "a client connection's reader failed at " + now() + " ms on the line '" + line + "': " + cause;
        synchronized (this) {
            if (readerFailure == null) {
                readerFailure = failure;
            }
        }
        System.err.println("[chaos] " + failure);
    }

    /**
     * Fails when a client connection's reader failed: its client's later events are missing, so the
     * run cannot be checked.
     *
     * @throws IllegalStateException naming the line and the cause of the first failure
     */
    void requireReaders() {
        String failure = readerFailure;
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /** Tells client {@code id} to finish its section, close its lock client and exit. */
    void stop(int id) {
        OutputStream out = controls.get(id);
        if (out != null) {
            try {
                out.write("stop\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
            } catch (IOException gone) {
                // it exits anyway
            }
        }
    }

    synchronized int started(Fault fault, String target, int client) {
        faults.add(new FaultRecord(fault, target, client, now(), -1));
        return faults.size() - 1;
    }

    synchronized void retarget(int index, String target) {
        FaultRecord f = faults.get(index);
        faults.set(index, new FaultRecord(f.fault(), target, f.client(), f.start(), f.end()));
    }

    synchronized void healed(int index) {
        FaultRecord f = faults.get(index);
        faults.set(index, new FaultRecord(f.fault(), f.target(), f.client(), f.start(), now()));
    }

    synchronized List<Event> events() {
        return List.copyOf(events);
    }

    synchronized List<FaultRecord> faults() {
        return List.copyOf(faults);
    }

    /** Whether any fault is still in effect. */
    synchronized boolean faultActive() {
        return faults.stream().anyMatch(f -> f.end() < 0);
    }

    /** Whether a grant of {@code lock} arrived after controller time {@code since}. */
    synchronized boolean grantedSince(String lock, long since) {
        return events.stream()
                .anyMatch(e ->
                        e.at() > since && e.type().equals("grant") && e.lock().equals(lock));
    }

    /** Writes the faults and events as tab-separated lines, for reading a run afterwards. */
    synchronized void dump(java.nio.file.Path file) throws IOException {
        StringBuilder b = new StringBuilder();
        for (FaultRecord f : faults) {
            b.append(f.start())
                    .append("\tfault\t")
                    .append(f.fault().id())
                    .append('\t')
                    .append(f.target())
                    .append("\tuntil ")
                    .append(f.end())
                    .append('\n');
        }
        for (Event e : events) {
            b.append(e.at())
                    .append('\t')
                    .append(e.client())
                    .append('\t')
                    .append(e.type())
                    .append('\t')
                    .append(e.lock())
                    .append('\t')
                    .append(e.section())
                    .append('\t')
                    .append(e.token())
                    .append('\t')
                    .append(e.detail())
                    .append('\t')
                    .append(e.wall())
                    .append('\t')
                    .append(e.mono())
                    .append('\n');
        }
        java.nio.file.Files.writeString(file, b);
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closed either way
        }
    }
}
