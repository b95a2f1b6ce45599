package dev.dlock.internal.wait;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Draws the owner ids the store tells holds apart by: {@code pid@host#} followed by 128 random bits in 32
 * hex digits. One is drawn per acquisition, and a fresh one for a retry after a give-back ({@link
 * WaitRequest}).
 *
 * <p>Design: the id is on every acquire's path, so it is written into a per-thread scratch array and
 * copied once into its string: one array and one string per id, where concatenating two {@code
 * Long.toHexString} results built two more of each (about 110 bytes of an uncontended cycle, issue 25).
 * The label is ASCII by construction ({@link #processLabel}), so every character is one byte.
 */
final class OwnerIds implements Supplier<String> {
    private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final int RANDOM_DIGITS = 32;

    private final byte[] label;
    private final ThreadLocal<byte[]> scratch;

    /** Ids that start with this process's label. */
    OwnerIds() {
        this(processLabel() + "#");
    }

    /** Ids that start with {@code label}, which must be ASCII. */
    OwnerIds(String label) {
        if (!label.chars().allMatch(c -> c < 128)) {
            throw new IllegalArgumentException("owner id label must be ASCII: " + label);
        }
        this.label = label.getBytes(StandardCharsets.US_ASCII);
        this.scratch = ThreadLocal.withInitial(() -> {
            byte[] id = new byte[this.label.length + RANDOM_DIGITS];
            System.arraycopy(this.label, 0, id, 0, this.label.length);
            return id;
        });
    }

    /** {@return a new owner id: the label and 32 random hex digits} */
    @Override
    public String get() {
        byte[] id = scratch.get();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        writeHex(random.nextLong(), id, label.length);
        writeHex(random.nextLong(), id, label.length + RANDOM_DIGITS / 2);
        return new String(id, StandardCharsets.ISO_8859_1);
    }

    private static void writeHex(long bits, byte[] into, int from) {
        for (int i = from + 15; i >= from; i--) {
            into[i] = HEX_DIGITS[(int) bits & 0xf];
            bits >>>= 4;
        }
    }

    /** {@code pid@host}, the host name reduced to {@code [A-Za-z0-9._-]}, at most 60 characters. */
    static String processLabel() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException e) {
                host = "localhost";
            }
        }
        String label = ProcessHandle.current().pid() + "@" + host.replaceAll("[^A-Za-z0-9._-]", "_");
        return label.length() > 60 ? label.substring(0, 60) : label;
    }
}
