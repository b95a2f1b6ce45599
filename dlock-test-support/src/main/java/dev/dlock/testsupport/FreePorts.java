package dev.dlock.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for the servers tests start (redis-server, etcd, ZooKeeper), chosen so that two servers
 * cannot be given one port, also when a server is stopped and started again on its old port.
 *
 * <p>Design note. A port the kernel picks ({@code new ServerSocket(0)}, closed before the server binds it)
 * lies in the range the kernel also uses for the local ports of outgoing connections (32768-60999 by
 * default), so a client socket opened meanwhile, or another test JVM's pick, can take it before the server
 * binds it, or while a stopped server waits for its restart. These ports come from 10,000-19,999 instead,
 * below that range, so only another server can take one, and: (1) one JVM hands them out in turn from a
 * random start, so a port comes back only after the JVM has handed out all of its share (a stopped
 * server's port stays its own for its restart); (2) the parallel lanes of {@code scripts/test.sh} each
 * have a share of their own ({@code DLOCK_TEST_LANE} of {@code DLOCK_TEST_LANES} in the environment),
 * and a lane runs one test JVM at a time. A port still bound by a process outside the run is skipped.
 * Ports from 20,000 up to the kernel's range are left for the Redis Cluster bus ({@link #nextPair}).
 */
public final class FreePorts {
    private static final int FROM = 10_000;
    private static final int TO = 20_000;

    private static final int SHARE_FROM;
    private static final int SHARE_SIZE;
    private static int next;

    static {
        int[] share = share(System.getenv("DLOCK_TEST_LANE"), System.getenv("DLOCK_TEST_LANES"));
        SHARE_FROM = share[0];
        SHARE_SIZE = share[1];
        next = ThreadLocalRandom.current().nextInt(SHARE_SIZE);
    }

    private FreePorts() {}

    /**
     * A loopback port nothing is bound to now, not handed out by this JVM before (until its share is used
     * up and begins again).
     *
     * @return the port
     * @throws IllegalStateException when every port of this JVM's share is bound
     */
    public static int next() {
        return nextPair(0);
    }

    /**
     * A port as {@link #next()} whose {@code port + offset} is free too (a Redis Cluster node's bus port is
     * its port + 10,000).
     *
     * @param offset the distance of the second port, 0 for none
     * @return the first port
     * @throws IllegalStateException when no such port is left in this JVM's share
     */
    public static synchronized int nextPair(int offset) {
        for (int i = 0; i < SHARE_SIZE; i++) {
            int port = SHARE_FROM + next;
            next = (next + 1) % SHARE_SIZE;
            if (bindable(port) && (offset == 0 || bindable(port + offset))) {
                return port;
            }
        }
        throw new IllegalStateException(
                "no free loopback port from " + SHARE_FROM + " to " + (SHARE_FROM + SHARE_SIZE - 1));
    }

    /** The first port and the number of ports of a lane's share (the whole range outside lanes). */
    static int[] share(String lane, String lanes) {
        int count = positive(lanes, 1);
        int index = Math.min(positive(lane, 1), count);
        int size = (TO - FROM) / count;
        return new int[] {FROM + (index - 1) * size, size};
    }

    private static boolean bindable(int port) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(false);
            probe.bind(new InetSocketAddress(port)); // every address: a server may bind more than loopback
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    private static int positive(String value, int otherwise) {
        try {
            return value == null ? otherwise : Math.max(1, Integer.parseInt(value.trim()));
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }
}
