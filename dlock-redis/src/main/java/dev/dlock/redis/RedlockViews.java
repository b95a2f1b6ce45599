package dev.dlock.redis;

import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Merges the masters' descriptions of a resource into the Redlock view: a holder is one that holds on
 * a majority of the masters (counting those that did not answer as possibly holding it, so a valid
 * holder stays visible while a minority is down); its token is the one most of its masters record (the
 * written-back token), its time left the one a majority of masters still grant; the hold-back after a
 * lost state lasts until a majority of masters grant again.
 *
 * <p>Concurrency: stateless. Failure modes: none; a snapshot, stale at once.
 */
final class RedlockViews {
    private RedlockViews() {}

    static LockInfo merge(String name, LockKind kind, List<LockInfo> perMaster, int quorum, int unanswered) {
        Map<String, List<LockInfo.Holder>> byOwner = new LinkedHashMap<>();
        int waiters = 0;
        for (LockInfo info : perMaster) {
            waiters = Math.max(waiters, info.waiters());
            for (LockInfo.Holder holder : info.holders()) {
                byOwner.computeIfAbsent(holder.owner(), o -> new ArrayList<>()).add(holder);
            }
        }
        int needed = Math.max(1, quorum - unanswered);
        List<LockInfo.Holder> holders = new ArrayList<>();
        for (List<LockInfo.Holder> entries : byOwner.values()) {
            if (entries.size() >= needed) {
                holders.add(holder(entries, quorum));
            }
        }
        return new LockInfo(
                name,
                kind,
                holders,
                waiters,
                heldBack(perMaster.stream().map(LockInfo::heldBack).toList(), quorum));
    }

    /**
     * The hold-back a Redlock grant meets, from the masters' own (zero for a master that grants): until a
     * quorum of them grants again, the quorum-th shortest. With fewer answers than a quorum, the longest
     * of them: at least that long, as no quorum can grant before.
     */
    static Duration heldBack(List<Duration> perMaster, int quorum) {
        List<Duration> sorted = new ArrayList<>(perMaster);
        sorted.sort(null);
        return sorted.isEmpty() ? Duration.ZERO : sorted.get(Math.min(quorum, sorted.size()) - 1);
    }

    private static LockInfo.Holder holder(List<LockInfo.Holder> entries, int quorum) {
        Map<Long, Integer> tokens = new HashMap<>();
        for (LockInfo.Holder entry : entries) {
            tokens.merge(entry.fencingToken(), 1, Integer::sum);
        }
        long token = tokens.entrySet().stream()
                .max(Map.Entry.<Long, Integer>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .orElseThrow()
                .getKey();
        List<Duration> left = entries.stream()
                .map(LockInfo.Holder::expiresIn)
                .filter(d -> d != null)
                .sorted(Comparator.reverseOrder())
                .toList();
        Duration expiresIn = left.isEmpty() ? null : left.get(Math.min(quorum, left.size()) - 1);
        return new LockInfo.Holder(entries.get(0).owner(), token, entries.get(0).mode(), expiresIn);
    }

    /** Merges the masters' listings, resource by resource, keeping those with a holder. */
    static List<LockInfo> mergeAll(List<List<LockInfo>> perMaster, int quorum, int unanswered) {
        Map<String, List<LockInfo>> byResource = new LinkedHashMap<>();
        for (List<LockInfo> listing : perMaster) {
            for (LockInfo info : listing) {
                byResource
                        .computeIfAbsent(info.kind() + "\0" + info.name(), k -> new ArrayList<>())
                        .add(info);
            }
        }
        List<LockInfo> result = new ArrayList<>();
        for (List<LockInfo> infos : byResource.values()) {
            LockInfo merged = merge(infos.get(0).name(), infos.get(0).kind(), infos, quorum, unanswered);
            if (!merged.holders().isEmpty()) {
                result.add(merged);
            }
        }
        return result;
    }
}
