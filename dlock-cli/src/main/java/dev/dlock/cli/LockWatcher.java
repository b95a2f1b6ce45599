package dev.dlock.cli;

import dev.dlock.LockInfo;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The console's model of one store: the locks held at the last poll, and a timeline of events derived by
 * diffing consecutive polls of {@code LockClient.list("")}. The store keeps no history, so the timeline is
 * what this process saw while it ran.
 *
 * <p>How events are derived, per holder (kind, name, owner, fencing token):
 *
 * <ul>
 *   <li>{@code grant}: the holder appears;
 *   <li>{@code force-release}: it is gone after this console force-released its name;
 *   <li>{@code lost} or {@code expiry}: it is gone and its lease could have run out in the store since it
 *       was last seen (lease left then at most the time from that poll's request to this poll's answer):
 *       {@code lost} when it had been seen renewing (its lease left went up between two polls), so its
 *       holder wanted it and lost it; {@code expiry} for a lease that was never seen renewed;
 *   <li>{@code release}: it is gone before its lease could have run out. Stores that do not report lease
 *       left (ZooKeeper: the lease is the holder's session) show every end as a release.
 * </ul>
 *
 * <p>Each poll also asks how long the store holds grants of the namespace back after it may have lost
 * state ({@code LockClient.heldBack()}): after a restart the store lists nothing, and that answer is what
 * says why nothing is granted either. A store that holds back per lock, not per namespace (a Redis Cluster)
 * refuses the question once; the view then says it cannot tell.
 *
 * <p>Concurrency: {@link #poll()} runs on the console's poller thread and asks the store outside the
 * monitor; everything else is short and synchronized, and returns copies. Failure modes: a failed poll
 * keeps the last view, records the error for the page, and derives no events; the next good poll diffs
 * against the last good one.
 */
final class LockWatcher {
    /** How many events are kept at most, whatever the window. */
    static final int MAX_EVENTS = 10_000;

    private static final long SLACK_NANOS = 100_000_000L;

    /** One derived event. Times are wall-clock milliseconds (for display only). */
    record Event(long seq, long atMillis, String type, String name, String kind, String owner, long token) {}

    /** A holder as the page shows it; lease left is null where the store does not tell. */
    record HolderView(
            String owner, String mode, long token, long heldForMillis, boolean seenAtStart, Long leaseLeftMillis) {}

    /** A lock as the page shows it; waiters is null where the store keeps no queue. */
    record LockView(String name, String kind, Integer waiters, List<HolderView> holders) {}

    /**
     * The locks of the last good poll, its time, the error of the last poll if it failed, and the hold-back
     * left (null where the store does not tell it per namespace).
     */
    record View(long polledAtMillis, String error, List<LockView> locks, Long heldBackMillis) {}

    private record HolderKey(String kind, String name, String owner, long token) {}

    private static final class Tracked {
        final String mode;
        final long firstSeenNanos;
        final boolean seenAtStart;
        long lastRequestNanos;
        long lastAnswerNanos;
        Long lastLeftMillis;
        boolean renewed;

        Tracked(String mode, long firstSeenNanos, boolean seenAtStart) {
            this.mode = mode;
            this.firstSeenNanos = firstSeenNanos;
            this.seenAtStart = seenAtStart;
        }
    }

    private final Supplier<List<LockInfo>> source;
    private final Supplier<Duration> heldBackSource;
    private final LongSupplier nanoTime;
    private final LongSupplier wallMillis;
    private final long windowMillis;

    private final Map<HolderKey, Tracked> tracked = new LinkedHashMap<>();
    private final Map<String, Integer> waiters = new HashMap<>();
    private final Set<HolderKey> forced = new HashSet<>();
    private final Deque<Event> events = new ArrayDeque<>();
    private long sequence;
    private boolean polledOnce;
    private long polledAtMillis;
    private String error;
    /** False once the store refused to tell the hold-back per namespace. */
    private volatile boolean heldBackKnown = true;
    /** The hold-back of the last good poll, and when its answer came ({@code nanoTime}). */
    private Duration heldBack = Duration.ZERO;

    private long heldBackAnswerNanos;

    LockWatcher(
            Supplier<List<LockInfo>> source,
            Supplier<Duration> heldBack,
            LongSupplier nanoTime,
            LongSupplier wallMillis,
            long windowMillis) {
        this.source = source;
        this.heldBackSource = heldBack;
        this.nanoTime = nanoTime;
        this.wallMillis = wallMillis;
        this.windowMillis = windowMillis;
    }

    /** Asks the store once and folds the answer in; a failure is recorded, not thrown. */
    void poll() {
        long request = nanoTime.getAsLong();
        List<LockInfo> locks;
        Duration held;
        try {
            locks = source.get();
            held = askHeldBack();
        } catch (RuntimeException e) {
            synchronized (this) {
                error = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            return;
        }
        long answer = nanoTime.getAsLong();
        synchronized (this) {
            if (held != null) {
                heldBack = held;
                heldBackAnswerNanos = answer;
            }
            apply(locks, request, answer);
        }
    }

    /** The hold-back now, or null once the store refused to tell it per namespace (then not asked again). */
    private Duration askHeldBack() {
        if (!heldBackKnown) {
            return null;
        }
        try {
            return heldBackSource.get();
        } catch (UnsupportedOperationException e) {
            heldBackKnown = false;
            return null;
        }
    }

    private synchronized void apply(List<LockInfo> locks, long request, long answer) {
        long now = wallMillis.getAsLong();
        Map<HolderKey, LockInfo.Holder> present = new LinkedHashMap<>();
        waiters.clear();
        for (LockInfo info : locks) {
            waiters.put(info.kind().tag() + "\0" + info.name(), info.waiters());
            for (LockInfo.Holder h : info.holders()) {
                present.put(new HolderKey(info.kind().tag(), info.name(), h.owner(), h.fencingToken()), h);
            }
        }
        // Ends first: a holder that went and its successor that came between two polls, in that order.
        var gone = tracked.entrySet().iterator();
        while (gone.hasNext()) {
            var entry = gone.next();
            HolderKey key = entry.getKey();
            if (present.containsKey(key)) {
                continue;
            }
            gone.remove();
            Tracked t = entry.getValue();
            String type;
            if (forced.remove(key)) {
                type = "force-release";
            } else if (t.lastLeftMillis != null
                    && t.lastLeftMillis * 1_000_000 <= answer - t.lastRequestNanos + SLACK_NANOS) {
                type = t.renewed ? "lost" : "expiry";
            } else {
                type = "release";
            }
            add(now, type, key);
        }
        for (var entry : present.entrySet()) {
            HolderKey key = entry.getKey();
            LockInfo.Holder h = entry.getValue();
            Long left = h.expiresIn() == null ? null : h.expiresIn().toMillis();
            Tracked t = tracked.get(key);
            if (t == null) {
                t = new Tracked(h.mode(), request, !polledOnce);
                tracked.put(key, t);
                if (polledOnce) {
                    add(now, "grant", key);
                }
            } else if (left != null && t.lastLeftMillis != null) {
                long expected = t.lastLeftMillis - (request - t.lastAnswerNanos) / 1_000_000;
                if (left > expected + SLACK_NANOS / 1_000_000) {
                    t.renewed = true;
                }
            }
            t.lastRequestNanos = request;
            t.lastAnswerNanos = answer;
            t.lastLeftMillis = left;
        }
        forced.retainAll(tracked.keySet());
        polledOnce = true;
        polledAtMillis = now;
        error = null;
        prune(now);
    }

    /**
     * Marks the holders of a name now known as force-released, so that their disappearance is recorded as
     * such. Call before asking the store to release; {@link #forceReleaseDone} undoes it if nothing was.
     */
    synchronized void forceReleasing(String name) {
        for (HolderKey key : tracked.keySet()) {
            if (key.name().equals(name)) {
                forced.add(key);
            }
        }
    }

    /** After the store answered a force release: forget the marks if it removed nothing. */
    synchronized void forceReleaseDone(String name, boolean removed) {
        if (!removed) {
            forced.removeIf(key -> key.name().equals(name));
        }
    }

    private void add(long now, String type, HolderKey key) {
        events.addLast(new Event(++sequence, now, type, key.name(), key.kind(), key.owner(), key.token()));
        while (events.size() > MAX_EVENTS) {
            events.removeFirst();
        }
    }

    private void prune(long now) {
        while (!events.isEmpty() && events.peekFirst().atMillis() < now - windowMillis) {
            events.removeFirst();
        }
    }

    /** The locks of the last good poll, with hold times and lease left as of now. */
    synchronized View view() {
        long nanos = nanoTime.getAsLong();
        Map<String, List<HolderView>> byLock = new LinkedHashMap<>();
        Map<String, String[]> names = new HashMap<>();
        for (var entry : tracked.entrySet()) {
            HolderKey key = entry.getKey();
            Tracked t = entry.getValue();
            String id = key.kind() + "\0" + key.name();
            names.putIfAbsent(id, new String[] {key.name(), key.kind()});
            Long left = t.lastLeftMillis == null
                    ? null
                    : Math.max(0, t.lastLeftMillis - (nanos - t.lastAnswerNanos) / 1_000_000);
            byLock.computeIfAbsent(id, k -> new ArrayList<>())
                    .add(new HolderView(
                            key.owner(),
                            t.mode,
                            key.token(),
                            (nanos - t.firstSeenNanos) / 1_000_000,
                            t.seenAtStart,
                            left));
        }
        for (String id : waiters.keySet()) {
            if (!byLock.containsKey(id) && waiters.get(id) > 0) {
                byLock.put(id, new ArrayList<>());
                int zero = id.indexOf('\0');
                names.put(id, new String[] {id.substring(zero + 1), id.substring(0, zero)});
            }
        }
        List<LockView> locks = new ArrayList<>();
        for (var entry : byLock.entrySet()) {
            String[] nameKind = names.get(entry.getKey());
            Integer queued = waiters.get(entry.getKey());
            entry.getValue().sort(Comparator.comparingLong(HolderView::token));
            locks.add(new LockView(
                    nameKind[0],
                    nameKind[1],
                    queued == null || queued < 0 ? null : queued,
                    List.copyOf(entry.getValue())));
        }
        locks.sort(Comparator.comparing(LockView::name).thenComparing(LockView::kind));
        Long heldBackLeft =
                heldBackKnown ? Math.max(0, heldBack.toMillis() - (nanos - heldBackAnswerNanos) / 1_000_000) : null;
        return new View(polledAtMillis, error, List.copyOf(locks), heldBackLeft);
    }

    /** Events with a sequence number above {@code since}, oldest first, within the window. */
    synchronized List<Event> eventsSince(long since) {
        prune(wallMillis.getAsLong());
        return events.stream().filter(e -> e.seq() > since).toList();
    }
}
