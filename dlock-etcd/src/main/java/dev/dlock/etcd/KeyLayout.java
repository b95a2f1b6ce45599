package dev.dlock.etcd;

import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.OrderTokens;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Where dlock keeps its keys in etcd, what their values hold, and who of a queue holds.
 *
 * <p>Layout: one key per acquisition (holder or waiter), {@code <prefix><namespace>/<kind>/<name>/<owner>}.
 * The name is the UTF-8 bytes of the lock name with {@code %} and {@code /} percent-encoded, so no name
 * reaches another namespace, kind or resource, and the encoding keeps prefixes (a name prefix is a key
 * prefix). The owner id has no {@code /}. Every key is attached to its client's etcd lease.
 *
 * <p>Value: {@code <mode> <permits> <sortRevision>} in ASCII, e.g. {@code WRITE 1 0}. The queue of a
 * resource is its keys ordered by create revision; a read taken by a writer that downgrades is created
 * with the write key's create revision as its sort revision, so that it sorts right after that write and
 * before writers that queued meanwhile.
 *
 * <p>Who holds ({@link #blocker}): exclusive, fair and write keys hold when first; a read key holds when
 * no write key precedes it (other than the write it downgrades); a permit key holds when fewer than
 * {@code permits} keys precede it.
 *
 * <p>Fencing token ({@link #token}): {@link OrderTokens} of the key's create revision, or for a
 * downgrade's read (a key with a sort revision) of its write's. Revisions increase cluster-wide and are
 * never reused; etcd counts one per write transaction, so scaling overflows only after 2^59 writes (and
 * fails loudly then). Everything inside the backend (queue order, renewal checks, a downgrade's sort
 * revision) works on raw revisions; only tokens leave it scaled.
 */
final class KeyLayout {
    private KeyLayout() {}

    /** The fencing token of a key (see the class note). */
    static long token(Entry entry) {
        return entry.sortRevision() > 0
                ? OrderTokens.ofDowngradedRead(entry.sortRevision())
                : OrderTokens.ofCreation(entry.createRevision());
    }

    /** One key of a resource's queue. */
    record Entry(String owner, Mode mode, int permits, long sortRevision, long createRevision, long lease) {
        long order() {
            return sortRevision > 0 ? sortRevision : createRevision;
        }
    }

    /** A read of a resource's keys in queue order (create revision, ascending). */
    static final GetOption QUEUE_READ = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .build();

    static final Comparator<Entry> QUEUE_ORDER =
            Comparator.comparingLong(Entry::order).thenComparingLong(Entry::createRevision);

    /** {@code <prefix><namespace>/} */
    static String namespaceDir(String prefix, String namespace) {
        return prefix + namespace + "/";
    }

    /** {@code <prefix><namespace>/<kind>/<encoded name>/} */
    static ByteSequence resourceDir(String prefix, LockKey key) {
        return bytes(namespaceDir(prefix, key.namespace()) + key.kind().tag() + "/" + encodeName(key.name()) + "/");
    }

    static ByteSequence entryKey(ByteSequence resourceDir, String owner) {
        return resourceDir.concat(bytes(owner));
    }

    static ByteSequence value(Mode mode, int permits, long sortRevision) {
        return bytes(mode.name() + " " + permits + " " + sortRevision);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Percent-encodes {@code %} and {@code /} in the UTF-8 bytes of a name. */
    static String encodeName(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(utf8.length + 8);
        for (byte b : utf8) {
            if (b == '%') {
                out.writeBytes(new byte[] {'%', '2', '5'});
            } else if (b == '/') {
                out.writeBytes(new byte[] {'%', '2', 'F'});
            } else {
                out.write(b);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String decodeName(String encoded) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(encoded.length());
        byte[] in = encoded.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < in.length; i++) {
            if (in[i] == '%' && i + 2 < in.length) {
                out.write(Integer.parseInt(new String(in, i + 1, 2, StandardCharsets.US_ASCII), 16));
                i += 2;
            } else {
                out.write(in[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The entry of one key, or null for a key dlock did not write. */
    static Entry parse(KeyValue kv) {
        String key = kv.getKey().toString(StandardCharsets.UTF_8);
        String[] value = kv.getValue().toString(StandardCharsets.UTF_8).split(" ", -1);
        if (value.length != 3) {
            return null;
        }
        try {
            return new Entry(
                    key.substring(key.lastIndexOf('/') + 1),
                    Mode.valueOf(value[0]),
                    Integer.parseInt(value[1]),
                    Long.parseLong(value[2]),
                    kv.getCreateRevision(),
                    kv.getLease());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The entries of a range answer, in queue order. */
    static List<Entry> queue(List<KeyValue> kvs) {
        List<Entry> entries = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            Entry e = parse(kv);
            if (e != null) {
                entries.add(e);
            }
        }
        entries.sort(QUEUE_ORDER);
        return entries;
    }

    /** The entry that decides the wait of {@code queue.get(index)}: what it watches. */
    enum Wait {
        /** It holds. */
        NONE,
        /** It waits for one key to go: {@link #blocker} names it. */
        KEY,
        /** It waits for enough keys ahead to go (semaphore): it watches the resource. */
        ANY
    }

    /**
     * Whether the entry at {@code index} holds, and if not, what it waits for.
     *
     * @return {@link Wait#NONE} when it holds
     */
    static Wait waitOf(List<Entry> queue, int index, int permits) {
        Entry me = queue.get(index);
        return switch (me.mode()) {
            case EXCLUSIVE, FAIR, WRITE -> index == 0 ? Wait.NONE : Wait.KEY;
            case READ -> blockingWriter(queue, index) < 0 ? Wait.NONE : Wait.KEY;
            case PERMIT -> index < permits ? Wait.NONE : Wait.ANY;
        };
    }

    /** The entry a {@link Wait#KEY} waiter watches: its predecessor, or for a read the nearest writer. */
    static Entry blocker(List<Entry> queue, int index) {
        if (queue.get(index).mode() == Mode.READ) {
            return queue.get(blockingWriter(queue, index));
        }
        return queue.get(index - 1);
    }

    private static int blockingWriter(List<Entry> queue, int index) {
        Entry me = queue.get(index);
        for (int i = index - 1; i >= 0; i--) {
            Entry e = queue.get(i);
            if (e.mode() == Mode.WRITE && e.createRevision() != me.sortRevision()) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Whether the entry at {@code index} is a downgrade's read whose write entry is no longer in the queue
     * (its lease ended, or it was force-released) when the read is decided: sorted at the write's place,
     * it would otherwise hold beside a writer granted after the write went.
     */
    static boolean downgradeWithoutItsWrite(List<Entry> queue, int index) {
        Entry me = queue.get(index);
        if (me.mode() != Mode.READ || me.sortRevision() == 0) {
            return false;
        }
        for (Entry e : queue) {
            if (e.mode() == Mode.WRITE && e.createRevision() == me.sortRevision()) {
                return false;
            }
        }
        return true;
    }

    /** Whether the entry at {@code index} holds, by the permits it was created with (for describe). */
    static boolean holds(List<Entry> queue, int index) {
        return waitOf(queue, index, queue.get(index).permits()) == Wait.NONE;
    }
}
