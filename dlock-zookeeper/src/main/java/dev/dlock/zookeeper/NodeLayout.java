package dev.dlock.zookeeper;

import dev.dlock.LockKind;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Where dlock keeps its nodes in ZooKeeper, and how names and owners are written into paths and data.
 *
 * <p>Layout, relative to the client's chroot or Curator namespace:
 *
 * <pre>
 * /&lt;namespace&gt;/lock/&lt;name&gt;                      EPHEMERAL, the exclusive holder
 * /&lt;namespace&gt;/lock/&lt;name&gt;!&lt;owner&gt;              EPHEMERAL, its guard
 * /&lt;namespace&gt;/fair/&lt;name&gt;/f-&lt;owner&gt;-&lt;seq&gt;      EPHEMERAL_SEQUENTIAL, fair queue entries
 * /&lt;namespace&gt;/rw/&lt;name&gt;/r-&lt;owner&gt;-&lt;seq&gt;        read entries  (w- for write entries)
 * /&lt;namespace&gt;/rw/&lt;name&gt;/d-&lt;wseq&gt;-&lt;owner&gt;-&lt;seq&gt; downgrade's read entry
 * /&lt;namespace&gt;/sem/&lt;name&gt;/p-&lt;owner&gt;-&lt;seq&gt;       permit entries
 * </pre>
 *
 * Every directory is a CONTAINER node, so ZooKeeper reaps it once empty. The owner id (128 random bits)
 * sits in each sequential node's name, which makes it the GUID that finds a node again after a
 * connection loss in the middle of its create.
 *
 * <p>Escaping: a namespace or lock name becomes one path segment. Bytes of its UTF-8 form outside {@code
 * [A-Za-z0-9_:-]} (and a {@code .} in first position, so that no segment is {@code .} or {@code ..}) are
 * written {@code %XX}. The mapping is injective, so no name reaches another name, kind or namespace. An
 * escaped name longer than {@value #MAX_SEGMENT} characters is cut at {@value #KEPT_PREFIX} characters
 * and followed by {@code ~} and 128 bits of its SHA-256 ({@code ~} never appears in an escaped name); the
 * full name is always in the node data. ZooKeeper has no fixed path length limit, but every {@code
 * getChildren} reply must fit in {@code jute.maxbuffer} (1 MiB by default), so short segments keep listing
 * a namespace with many locks possible.
 *
 * <p>Node data: {@code owner \n permits \n name} in UTF-8. A downgrade's read entry writes {@code permits
 * writeCzxid} on the second line: the czxid of the write entry it came from, which gives its fencing token
 * ({@link dev.dlock.spi.OrderTokens#ofDowngradedRead}) also after that entry is gone. Data without it (entries made
 * before) still parses, with no write czxid.
 */
final class NodeLayout {
    /** Longest escaped name kept verbatim in a path segment. */
    static final int MAX_SEGMENT = 200;

    private static final int KEPT_PREFIX = 150;
    private static final int SEQUENCE_DIGITS = 10;
    private static final HexFormat HEX = HexFormat.of().withUpperCase();

    private NodeLayout() {}

    /** The escaped form of a namespace or name, one path segment. */
    static String segment(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length + 8);
        for (int i = 0; i < bytes.length; i++) {
            int b = bytes[i] & 0xff;
            boolean plain = (b >= 'a' && b <= 'z')
                    || (b >= 'A' && b <= 'Z')
                    || (b >= '0' && b <= '9')
                    || b == '_'
                    || b == ':'
                    || b == '-'
                    || (b == '.' && i > 0);
            if (plain) {
                out.append((char) b);
            } else {
                out.append('%').append(HEX.toHexDigits((byte) b));
            }
        }
        if (out.length() <= MAX_SEGMENT) {
            return out.toString();
        }
        int cut = KEPT_PREFIX;
        // Never cut inside a %XX escape.
        while (out.charAt(cut - 1) == '%' || out.charAt(cut - 2) == '%') {
            cut--;
        }
        return out.substring(0, cut) + "~" + HEX.formatHex(sha256(bytes), 0, 16);
    }

    /**
     * The readable start of the name a segment was made from: the whole name for a short one, a prefix for
     * a hashed one.
     */
    static String readablePart(String segment) {
        int hash = segment.indexOf('~');
        String escaped = hash < 0 ? segment : segment.substring(0, hash);
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c == '%' && i + 2 < escaped.length()) {
                bytes.write(HexFormat.fromHexDigits(escaped, i + 1, i + 3));
                i += 2;
            } else {
                bytes.write(c);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Whether a segment carries the whole name ({@code false} for a hashed long name). */
    static boolean isComplete(String segment) {
        return segment.indexOf('~') < 0;
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** The directory of one kind in a namespace: {@code /<namespace>/<kind>}. */
    static String kindDir(String namespace, LockKind kind) {
        return "/" + segment(namespace) + "/" + kind.tag();
    }

    /**
     * The node of a resource: the holder node of an exclusive lock, else the directory of the queue
     * entries.
     */
    static String resourcePath(LockKey key) {
        return kindDir(key.namespace(), key.kind()) + "/" + segment(key.name());
    }

    /**
     * The guard of an exclusive holder node: {@code <holder>!<owner>}, created and deleted with the holder
     * node in one transaction, so that deleting it succeeds only while this owner's node is the one there
     * ({@code !} never appears in an escaped name).
     */
    static String guardPath(String holderPath, String owner) {
        return holderPath + "!" + segment(owner);
    }

    /** Whether a child of a kind directory is a guard rather than a holder node. */
    static boolean isGuard(String segment) {
        return segment.indexOf('!') >= 0;
    }

    /** The one-letter prefix of a sequential entry for a mode; exclusive locks have none. */
    static char prefix(Mode mode) {
        return switch (mode) {
            case FAIR -> 'f';
            case READ -> 'r';
            case WRITE -> 'w';
            case PERMIT -> 'p';
            case EXCLUSIVE -> throw new IllegalArgumentException("exclusive locks have no sequential entries");
        };
    }

    /** The path given to a sequential create; ZooKeeper appends ten digits. */
    static String entryPathPrefix(LockKey key, String owner) {
        return resourcePath(key) + "/" + prefix(key.mode()) + "-" + owner + "-";
    }

    /**
     * The path given to the sequential create of a read entry taken while the same client holds the write
     * entry with sequence {@code writeSequence} (a downgrade): {@code d-<writeSequence>-<owner>-}. The
     * entry holds from its creation, whatever its place, so writers wait for it wherever it is.
     */
    static String downgradePathPrefix(LockKey key, String owner, long writeSequence) {
        return resourcePath(key) + "/d-" + String.format("%0" + SEQUENCE_DIGITS + "d", writeSequence) + "-" + owner
                + "-";
    }

    /** Node data: owner, permits and the full name. */
    static byte[] data(String owner, int permits, String name) {
        return data(owner, permits, name, 0);
    }

    /** Node data of a downgrade's read entry: {@code writeCzxid} is its write entry's czxid (0: none). */
    static byte[] data(String owner, int permits, String name, long writeCzxid) {
        String counts = writeCzxid > 0 ? permits + " " + writeCzxid : Integer.toString(permits);
        return (owner + "\n" + counts + "\n" + name).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Parsed node data.
     *
     * @param writeCzxid for a downgrade's read entry, the czxid of the write entry it came from; else 0
     */
    record Data(String owner, int permits, String name, long writeCzxid) {
        static Data parse(byte[] data) {
            if (data == null) {
                return null;
            }
            String text = new String(data, StandardCharsets.UTF_8);
            int first = text.indexOf('\n');
            int second = first < 0 ? -1 : text.indexOf('\n', first + 1);
            if (second < 0) {
                return null; // not a dlock node
            }
            String counts = text.substring(first + 1, second);
            int space = counts.indexOf(' ');
            try {
                return new Data(
                        text.substring(0, first),
                        Integer.parseInt(space < 0 ? counts : counts.substring(0, space)),
                        text.substring(second + 1),
                        space < 0 ? 0 : Long.parseLong(counts.substring(space + 1)));
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }

    /**
     * One sequential entry, parsed from its node name {@code <prefix>-<owner>-<seq>}.
     *
     * @param node the child name
     * @param mode the mode its prefix stands for
     * @param owner the owner id
     * @param sequence the sequence number ZooKeeper appended
     * @param downgradeOf for the read entry of a downgrade, the sequence of the write entry it came from;
     *     else -1
     */
    record Entry(String node, Mode mode, String owner, long sequence, long downgradeOf) {
        /** Whether this is the read entry of a downgrade, which holds wherever it is in the queue. */
        boolean downgrade() {
            return downgradeOf >= 0;
        }

        /** Parses a child name; null for a name that is not a dlock entry. */
        static Entry parse(String node) {
            int n = node.length();
            if (n < SEQUENCE_DIGITS + 4 || node.charAt(1) != '-' || node.charAt(n - SEQUENCE_DIGITS - 1) != '-') {
                return null;
            }
            Mode mode =
                    switch (node.charAt(0)) {
                        case 'f' -> Mode.FAIR;
                        case 'r' -> Mode.READ;
                        case 'w' -> Mode.WRITE;
                        case 'p' -> Mode.PERMIT;
                        case 'd' -> Mode.READ;
                        default -> null;
                    };
            if (mode == null) {
                return null;
            }
            long sequence;
            try {
                sequence = Long.parseLong(node.substring(n - SEQUENCE_DIGITS));
            } catch (NumberFormatException e) {
                return null;
            }
            int ownerStart = 2;
            long downgradeOf = -1;
            if (node.charAt(0) == 'd') {
                ownerStart = SEQUENCE_DIGITS + 3;
                if (n < ownerStart + SEQUENCE_DIGITS + 2 || node.charAt(ownerStart - 1) != '-') {
                    return null;
                }
                try {
                    downgradeOf = Long.parseLong(node.substring(2, ownerStart - 1));
                } catch (NumberFormatException e) {
                    return null;
                }
            }
            return new Entry(node, mode, node.substring(ownerStart, n - SEQUENCE_DIGITS - 1), sequence, downgradeOf);
        }
    }
}
