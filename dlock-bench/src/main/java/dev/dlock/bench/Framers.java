package dev.dlock.bench;

import java.util.function.Supplier;

/**
 * Counts the requests in a client-to-server byte stream of each store's wire protocol, for the counting
 * proxy of the held scenario. A "request" is one command the server executes:
 *
 * <ul>
 *   <li>Redis (RESP): one command array (a pipelined batch of N commands counts N; one {@code EVALSHA}
 *       counts 1 however many keys it touches);
 *   <li>PostgreSQL: one simple {@code Query} or extended-protocol {@code Execute} message;
 *   <li>MariaDB/MySQL: one command packet (sequence id 0);
 *   <li>ZooKeeper: one request frame after the connect request, heartbeats (pings) included.
 * </ul>
 *
 * <p>Concurrency: a framer belongs to one connection direction and is fed by one thread.
 */
final class Framers {
    private Framers() {}

    /** Consumes stream bytes and reports how many requests they completed. */
    interface Framer {
        int feed(byte[] buffer, int offset, int length);
    }

    static Supplier<Framer> forBackend(String backend) {
        return switch (backend) {
            case "redis" -> Resp::new;
            case "postgresql" -> Postgres::new;
            case "mariadb" -> MySql::new;
            case "zookeeper" -> ZooKeeperFrames::new;
            default -> throw new IllegalArgumentException("no wire framer for " + backend);
        };
    }

    /** RESP requests: arrays of bulk strings, or inline commands (one per line). */
    static final class Resp implements Framer {
        private final StringBuilder line = new StringBuilder();
        private long argumentsLeft; // > 0 while inside an array
        private long bodyLeft; // > 0 while skipping a bulk string and its CRLF

        @Override
        public int feed(byte[] buffer, int offset, int length) {
            int completed = 0;
            int i = offset;
            int end = offset + length;
            while (i < end) {
                if (bodyLeft > 0) {
                    int skip = (int) Math.min(bodyLeft, end - i);
                    bodyLeft -= skip;
                    i += skip;
                    if (bodyLeft == 0 && --argumentsLeft == 0) {
                        completed++;
                    }
                    continue;
                }
                byte b = buffer[i++];
                if (b != '\n') {
                    if (b != '\r') {
                        line.append((char) b);
                    }
                    continue;
                }
                completed += endOfLine();
                line.setLength(0);
            }
            return completed;
        }

        private int endOfLine() {
            if (line.length() == 0) {
                return 0;
            }
            char kind = line.charAt(0);
            if (argumentsLeft == 0) {
                if (kind != '*') {
                    return 1; // an inline command
                }
                long n = Long.parseLong(line.substring(1));
                if (n <= 0) {
                    return 1;
                }
                argumentsLeft = n;
                return 0;
            }
            long size = Long.parseLong(line.substring(1));
            if (size < 0) {
                return --argumentsLeft == 0 ? 1 : 0;
            }
            bodyLeft = size + 2;
            return 0;
        }
    }

    /** Messages made of a fixed-size header that gives the body length, then the body. */
    abstract static class Framed implements Framer {
        private final byte[] header = new byte[16];
        private int headerFill;
        private long bodyLeft;

        abstract int headerSize();

        /** Inspects a complete header: returns the body length still to skip, counts if it is a request. */
        abstract long onHeader(byte[] header);

        private int counted;

        void count() {
            counted++;
        }

        @Override
        public int feed(byte[] buffer, int offset, int length) {
            counted = 0;
            int i = offset;
            int end = offset + length;
            while (i < end) {
                if (bodyLeft > 0) {
                    int skip = (int) Math.min(bodyLeft, end - i);
                    bodyLeft -= skip;
                    i += skip;
                    continue;
                }
                header[headerFill++] = buffer[i++];
                if (headerFill == headerSize()) {
                    headerFill = 0;
                    bodyLeft = onHeader(header);
                }
            }
            return counted;
        }

        static int bigEndianInt(byte[] b, int at) {
            return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
        }
    }

    /** PostgreSQL: startup packets (length, code) until the real startup message, then typed messages. */
    static final class Postgres extends Framed {
        private static final int SSL_REQUEST = 80877103;
        private static final int GSS_REQUEST = 80877104;
        private boolean started;

        @Override
        int headerSize() {
            return started ? 5 : 8;
        }

        @Override
        long onHeader(byte[] h) {
            if (!started) {
                int code = bigEndianInt(h, 4);
                started = code != SSL_REQUEST && code != GSS_REQUEST;
                return bigEndianInt(h, 0) - 8L;
            }
            if (h[0] == 'Q' || h[0] == 'E') {
                count();
            }
            return bigEndianInt(h, 1) - 4L;
        }
    }

    /** MySQL/MariaDB: 3-byte little-endian length and a sequence id; a command starts a sequence at 0. */
    static final class MySql extends Framed {
        @Override
        int headerSize() {
            return 4;
        }

        @Override
        long onHeader(byte[] h) {
            if (h[3] == 0) {
                count();
            }
            return (h[0] & 0xff) | ((h[1] & 0xff) << 8) | ((long) (h[2] & 0xff) << 16);
        }
    }

    /** ZooKeeper: length-prefixed frames; the first is the connect request. */
    static final class ZooKeeperFrames extends Framed {
        private boolean connected;

        @Override
        int headerSize() {
            return 4;
        }

        @Override
        long onHeader(byte[] h) {
            if (connected) {
                count();
            }
            connected = true;
            return bigEndianInt(h, 0);
        }
    }
}
