package dev.dlock;

/**
 * The kind of a lock, as {@link LockInfo#kind()} reports it. Kinds never interact, even under one name:
 * {@code lock("a")} and {@code fairLock("a")} are two locks, and {@code list} shows both.
 */
public enum LockKind {
    /** {@link LockClient#lock}: one holder, waiters in no particular order. */
    LOCK("lock"),
    /** {@link LockClient#fairLock}: one holder, waiters served in order across clients. */
    FAIR("fair"),
    /** {@link LockClient#readWriteLock}: many readers or one writer. */
    READ_WRITE("rw"),
    /** {@link LockClient#semaphore}: up to a number of permit holders. */
    SEMAPHORE("sem");

    private final String tag;

    LockKind(String tag) {
        this.tag = tag;
    }

    /**
     * The short tag stores use in keys, paths and rows, and the CLI and the Spring endpoint print.
     *
     * @return {@code lock}, {@code fair}, {@code rw} or {@code sem}
     */
    public String tag() {
        return tag;
    }

    /**
     * The tag, so that a kind printed or joined into a string reads as stores and the CLI write it.
     *
     * @return {@link #tag()}
     */
    @Override
    public String toString() {
        return tag;
    }

    /**
     * The kind a stored tag names.
     *
     * @param tag {@code lock}, {@code fair}, {@code rw} or {@code sem}
     * @return the kind
     * @throws IllegalArgumentException for any other tag
     */
    public static LockKind ofTag(String tag) {
        for (LockKind kind : values()) {
            if (kind.tag.equals(tag)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown lock kind tag '" + tag + "': expected lock, fair, rw or sem");
    }
}
