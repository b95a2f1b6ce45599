package dev.dlock.redis;

import io.lettuce.core.cluster.SlotHash;

/**
 * One short hash tag per Redis Cluster hash slot: {@code tag(s)} hashes to slot {@code s}.
 *
 * <p>Design: the Cluster marker of the hold-back after a lost state is one key per namespace and slot
 * ({@link ResourceKeys#clusterEpoch}); a grant's script declares it beside the resource's keys, so it
 * must hash to the resource's slot. The table holds, for every slot, the first base-36 number that
 * hashes to it (at most four characters); it is built once, on the first Cluster grant (about 88,000
 * CRC16 computations).
 *
 * <p>Concurrency: the table is built in the holder class's initializer and never changes.
 *
 * <p>Failure modes: none.
 */
final class SlotTags {
    private SlotTags() {}

    /** The hash tag of {@code slot} (0 to 16383). */
    static String of(int slot) {
        return Table.TAGS[slot];
    }

    private static final class Table {
        static final String[] TAGS = build();

        private static String[] build() {
            String[] tags = new String[SlotHash.SLOT_COUNT];
            int missing = tags.length;
            for (int i = 0; missing > 0; i++) {
                String tag = Integer.toString(i, 36);
                int slot = SlotHash.getSlot(tag);
                if (tags[slot] == null) {
                    tags[slot] = tag;
                    missing--;
                }
            }
            return tags;
        }
    }
}
