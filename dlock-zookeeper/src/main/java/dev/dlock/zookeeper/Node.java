package dev.dlock.zookeeper;

import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.OrderTokens;
import java.util.Set;

/**
 * One acquisition of this client and the node it created (or is creating) for it: the exclusive holder
 * node, or its sequential queue entry.
 *
 * <p>Life: {@code NEW} (no node yet) -> {@code WAITING} (a queue entry that is not granted) -> {@code
 * HELD} -> {@code ENDED} (released, lost, given up). An ended node is never reused: a new acquisition by
 * the same owner id gets a new one.
 *
 * <p>Concurrency: every field is guarded by the node's monitor, held only for field updates, never
 * across a request.
 */
final class Node {
    enum State {
        NEW,
        WAITING,
        HELD,
        ENDED
    }

    final LockKey key;
    final String owner;
    /** The exclusive node's path, or the queue directory of the entries. */
    final String resource;

    State state = State.NEW;
    /** A create is on its way; its answer decides what happens to the node. */
    boolean creating;
    /** The engine released or cancelled the acquisition: a create still on its way deletes its node. */
    boolean abandoned;
    /** The node's path once created; null before, and after an entry was found gone. */
    String path;

    long czxid;
    /** For a downgrade's read entry, the czxid of the write entry it came from; else 0. */
    long writeCzxid;
    /** The session that created the node ({@code ephemeralOwner}). */
    long session;
    /** The entry's sequence number (queue modes). */
    long sequence;

    int permits;
    /** The lease time of the current grant: the longest a local waiter waits before asking again. */
    long leaseMillis;
    /** When the engine's current attempt reached this backend: the earliest it may have been sent. */
    long attemptNanos;
    /** The server has an armed watch that reports this held node's deletion by someone else. */
    boolean deletionWatchArmed;
    /** The path of the entry this waiter waits for (data watch set on it), or null. */
    String blockerPath;
    /** Semaphore waiter: the sequences of the entries ahead of it that still exist. */
    Set<Long> ahead;

    Node(LockKey key, String owner, int permits) {
        this.key = key;
        this.owner = owner;
        this.resource = NodeLayout.resourcePath(key);
        this.permits = permits;
    }

    /** The fencing token of a grant of this node (caller holds the monitor). */
    long token() {
        return writeCzxid > 0 ? OrderTokens.ofDowngradedRead(writeCzxid) : OrderTokens.ofCreation(czxid);
    }

    boolean exclusive() {
        return key.mode() == Mode.EXCLUSIVE;
    }

    @Override
    public String toString() {
        return "Node[" + owner + " " + key.mode() + " " + state + " " + path + "]";
    }
}
