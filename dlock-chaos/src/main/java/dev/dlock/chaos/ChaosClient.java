package dev.dlock.chaos;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockTimeoutException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One client process of the suite: connects to the store through the public API and loops over
 * critical sections on three locks (an exclusive lock {@code x}, the write side of a read-write lock
 * {@code rw}, and one permit of a two-permit semaphore {@code sem}), reporting every step to the
 * controller over a socket as one line: event, lock, section, token, detail, wall clock (ms) and
 * monotonic clock (ns).
 *
 * <p>A section on {@code x} or {@code rw}: enter (unfenced read), check {@link Lease#isValid()} then claim
 * the ledger row with the token, read, work (a few ms, sometimes longer than the lease), write fenced,
 * write unfenced. Half of the sections check {@link Lease#isValid()} again before the fenced write (a
 * careful application); the other half trust the first check (an application that checks once), so
 * that a holder that lost its lease during the work reaches the fence.
 * A failed check is reported as {@code told} and the fenced step is skipped; the unfenced control writes
 * regardless, trusting the grant. A semaphore section only logs its interval (two holders are legal).
 *
 * <p>Failure modes: a store or resource error ends the section (reported) and the loop goes on; the
 * process exits when the controller says {@code stop} or its socket closes, after closing the client and
 * reporting how many dlock threads were left.
 */
public final class ChaosClient {

    private final Map<String, String> args;
    private final Writer out;
    private final long leaseMillis;
    private final Random random;
    private final Resource resource;
    private final String[] locks;
    private volatile boolean stop;
    /** The open section's lease, while one is held; see {@link Held}. */
    private volatile Held held;

    private ChaosClient(Map<String, String> args, Writer out) {
        this.args = args;
        this.out = out;
        this.leaseMillis = Long.parseLong(args.get("lease-ms"));
        this.random = new Random(Long.parseLong(args.get("seed")));
        this.resource = new Resource(args.get("resource"));
        this.locks = args.get("locks").split(",");
    }

    /**
     * Runs one client; started by the controller, not by hand.
     *
     * @param argv {@code --key value} pairs: id, store, uri, resource, controller, lease-ms, locks, seed
     * @throws Exception when the controller cannot be reached
     */
    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            args.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        String[] controller = args.get("controller").split(":");
        try (Socket socket = new Socket(controller[0], Integer.parseInt(controller[1]))) {
            Writer out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
            ChaosClient client = new ChaosClient(args, out);
            Thread listener = new Thread(() -> client.listen(socket), "chaos-control");
            listener.setDaemon(true);
            listener.start();
            client.run();
        }
        System.exit(0);
    }

    private void listen(Socket socket) {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                stop = true;
            }
        } catch (IOException e) {
            // the controller is gone
        }
        stop = true;
    }

    synchronized void emit(String type, String lock, String section, long token, String detail) {
        try {
            out.write(args.get("id")
                    + '\t'
                    + type
                    + '\t'
                    + lock
                    + '\t'
                    + section
                    + '\t'
                    + token
                    + '\t'
                    + detail.replace('\t', ' ').replace('\n', ' ')
                    + '\t'
                    + System.currentTimeMillis()
                    + '\t'
                    + System.nanoTime()
                    + '\n');
            out.flush();
        } catch (IOException e) {
            stop = true;
        }
    }

    private void run() {
        emit("hello", "-", "-", 0, Long.toString(ProcessHandle.current().pid()));
        Thread deadlines = new Thread(this::watchDeadlines, "chaos-deadlines");
        deadlines.setDaemon(true);
        deadlines.start();
        LockClient client = connect();
        int n = 0;
        while (!stop && client != null) {
            String lock = locks[random.nextInt(locks.length)];
            section(client, lock, args.get("id") + "-" + ProcessHandle.current().pid() + "." + (n++));
        }
        if (client != null) {
            try {
                client.close();
            } catch (RuntimeException e) {
                emit("close_error", "-", "-", 0, e.toString());
            }
        }
        resource.close();
        List<String> left = threadsLeft();
        emit("closed", "-", "-", 0, left.size() + " " + String.join(",", left));
    }

    private LockClient connect() {
        while (!stop) {
            try {
                return LockClient.builder(args.get("uri"))
                        .namespace("chaos")
                        .leaseTime(Duration.ofMillis(leaseMillis))
                        .operationTimeout(Duration.ofMillis(Math.max(1000, leaseMillis / 2)))
                        .build();
            } catch (RuntimeException e) {
                emit("connect_error", "-", "-", 0, e.toString());
                Proc.sleep(300);
            }
        }
        return null;
    }

    /**
     * Threads still alive after the client was closed, besides the JVM's own and this class's, polled for
     * up to 3 s: Netty's shared {@code globalEventExecutor} thread stops by itself after a second idle.
     */
    private static List<String> threadsLeft() {
        long deadline = System.nanoTime() + 3_000_000_000L;
        List<String> left;
        do {
            Proc.sleep(250);
            left = Thread.getAllStackTraces().keySet().stream()
                    .filter(Thread::isAlive)
                    .filter(t -> !t.isDaemon() || t.getName().toLowerCase().contains("dlock"))
                    .filter(t -> !t.getName().equals("main") && !t.getName().startsWith("chaos-"))
                    .filter(t -> !t.getName().startsWith("DestroyJavaVM"))
                    .map(Thread::getName)
                    .sorted()
                    .toList();
        } while (!left.isEmpty() && System.nanoTime() < deadline);
        return left;
    }

    private void section(LockClient client, String lock, String section) {
        emit("invoke", lock, section, 0, "");
        Duration wait = Duration.ofMillis(2 * leaseMillis);
        Lease lease;
        try {
            lease = switch (lock) {
                case "x" -> client.lock(lock).acquire(wait);
                case "rw" -> client.readWriteLock(lock).writeLock().acquire(wait);
                default -> client.semaphore(lock, 2).acquire(wait);
            };
        } catch (LockTimeoutException e) {
            emit("timeout", lock, section, 0, "");
            return;
        } catch (LockException e) {
            emit("fail", lock, section, 0, e.toString());
            Proc.sleep(100);
            return;
        }
        long token = lease.fencingToken();
        emit("grant", lock, section, token, "");
        Held held = new Held(lease, lock, section, token);
        held.reportDeadline();
        this.held = held;
        lease.whenLost().thenAccept(e -> emit("lost", lock, section, token, String.valueOf(e.getMessage())));
        try {
            critical(lease, lock, section, token);
        } catch (SQLException | RuntimeException e) {
            emit("resource_error", lock, section, token, e.toString());
            resource.reset();
        }
        this.held = null;
        emit("releasing", lock, section, token, ""); // from here on the holder no longer believes it holds
        try {
            lease.close();
            emit("release", lock, section, token, "");
        } catch (RuntimeException e) {
            emit("release_error", lock, section, token, e.toString());
        }
    }

    private void critical(Lease lease, String lock, String section, long token) throws SQLException {
        String key = args.get("store") + "/" + lock;
        Resource.Entry entry = resource.enter(key);
        if (lock.equals("sem")) {
            Proc.sleep(workMillis());
            resource.exit(key, section, entry, false);
            emit("unfenced", lock, section, token, "interval");
            return;
        }
        boolean fenced = stillValid(lease, lock, section, token, "claim");
        if (fenced) {
            fenced = resource.claim(key, token, section);
            emit(fenced ? "claim_ok" : "claim_rejected", lock, section, token, "");
        }
        long value = fenced ? resource.readFenced(key) : 0;
        Proc.sleep(workMillis());
        boolean careful = random.nextBoolean();
        if (fenced && (!careful || stillValid(lease, lock, section, token, "write"))) {
            boolean written = resource.writeFenced(key, token, section, value + 1);
            emit(
                    written ? "write_ok" : "write_rejected",
                    lock,
                    section,
                    token,
                    (careful ? "checked " : "unchecked ") + (value + 1));
        }
        resource.exit(key, section, entry, true);
        emit("unfenced", lock, section, token, Long.toString(entry.value() + 1));
    }

    /**
     * The lease of the open section, whose local deadline is reported as a {@code deadline} event (detail:
     * the deadline on this process's monotonic clock, ns) at the grant and whenever a renewal moved it:
     * the checker's told-first measure needs to know until when the holder believed it held.
     */
    private final class Held {
        final Lease lease;
        final String lock;
        final String section;
        final long token;
        long reported;

        Held(Lease lease, String lock, String section, long token) {
            this.lease = lease;
            this.lock = lock;
            this.section = section;
            this.token = token;
        }

        /** Reports the deadline if it moved by more than a millisecond since the last report. */
        synchronized void reportDeadline() {
            if (!lease.isValid()) {
                return;
            }
            long deadline = System.nanoTime() + lease.remaining().toNanos();
            if (deadline - reported > 1_000_000L) {
                reported = deadline;
                emit("deadline", lock, section, token, Long.toString(deadline));
            }
        }
    }

    /** Polls the open section's deadline every 10 ms (renewals move it). */
    private void watchDeadlines() {
        while (!stop) {
            Held current = held;
            if (current != null) {
                current.reportDeadline();
            }
            Proc.sleep(10);
        }
    }

    /**
     * How long a section works between its read and its write: mostly 20 to 120 ms, one time in ten one
     * to three lease times (a long job, which depends on renewal and so meets partitions and clock steps).
     */
    private long workMillis() {
        return random.nextInt(10) == 0
                ? leaseMillis + random.nextInt((int) (2 * leaseMillis))
                : 20 + random.nextInt(100);
    }

    /** True when the lease is valid; otherwise reports it (\"valid\") and returns true; otherwise reports that the
     * holder was told and returns false. */
    private boolean stillValid(Lease lease, String lock, String section, long token, String step) {
        if (lease.isValid()) {
            emit("valid", lock, section, token, step);
            return true;
        }
        emit("told", lock, section, token, step);
        return false;
    }
}
