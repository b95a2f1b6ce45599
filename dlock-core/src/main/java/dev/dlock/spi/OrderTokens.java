package dev.dlock.spi;

/**
 * Fencing tokens for stores whose entries carry a creation order that never repeats and only grows (a
 * ZooKeeper czxid, an etcd create revision), with room for the engine's cohort hand-off and no extra
 * write.
 *
 * <p>The token of a grant is its entry's order times {@value #SCALE}. Such a store grants an exclusive,
 * fair or write entry only when it is first in its queue, so every entry granted after it was created
 * after it (an entry ahead of it was granted first; an entry that vanished is created again at the end):
 * its order is larger and its token at least {@value #SCALE} larger. Of the values in between, the first
 * {@code BLOCK - 1} go to the engine's local passes ({@link LockBackend#tokenBlock()} returns {@link
 * #BLOCK}), and the last to a read that the write's holder downgrades to ({@link #ofDowngradedRead}): that
 * read's own entry is created after writers that queued meanwhile, but it is granted before them, so its
 * own order would give it a token above theirs.
 *
 * <p>A store that adopts this must say so in its docs: its tokens are {@value #SCALE} times what clients
 * publishing the bare order published, so the two must not share locks (the older ones would be fenced
 * out). {@code Math} exact arithmetic: an order beyond {@code Long.MAX_VALUE / 16} fails loudly instead of
 * wrapping.
 */
public final class OrderTokens {
    /** Tokens per creation order. */
    public static final long SCALE = 16;

    /** What {@link LockBackend#tokenBlock()} returns for a store using these tokens. */
    public static final long BLOCK = SCALE - 1;

    private OrderTokens() {}

    /**
     * The token of a grant of the entry created at {@code order}.
     *
     * @param order the entry's creation order, positive
     * @return {@code order * SCALE}
     * @throws ArithmeticException if that overflows
     */
    public static long ofCreation(long order) {
        return Math.multiplyExact(order, SCALE);
    }

    /**
     * The token of a read granted under the write entry created at {@code writeOrder} (a downgrade): above
     * that write's grant and its passes, below every entry created after the write.
     *
     * @param writeOrder the creation order of the write entry the read downgrades from
     * @return {@code writeOrder * SCALE + BLOCK}
     * @throws ArithmeticException if that overflows
     */
    public static long ofDowngradedRead(long writeOrder) {
        return Math.addExact(ofCreation(writeOrder), BLOCK);
    }
}
