package dev.dlock.chaos;

import dev.dlock.chaos.Checker.Section;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * Checks the documented token guarantee: a grant of a lock made after another one ended its acquire gets
 * a higher fencing token.
 *
 * <p>Design note: "after" must be real time, not the order in which the controller happened to receive
 * the grant reports. A client reports {@code invoke} before it calls {@code acquire} and {@code grant}
 * after {@code acquire} returned; so when G1's {@code grant} report arrived before G2's {@code invoke}
 * report, G1's token existed before G2's acquire began, and G2's token must be higher. That pair with
 * G2's token not higher is a <b>regression</b> (a hard failure). Two grants whose reports overlap that way
 * (G2's invoke arrived before G1's grant) are concurrent acquires: either token may be the lower one, and a
 * client paused or slow between {@code acquire} returning and its report makes a lower token arrive after
 * a higher one. Those are counted as {@code arrival_order_differs}, for information only.
 *
 * <p>Limit: arrival times are stamped by the controller's reader thread of each client; a report held
 * back in the controller (a reader thread not scheduled) makes an invoke look later than it was. A false
 * regression needs that hold-up to outlast the other client's whole acquire, so each reported pair carries
 * its margin ({@code ms_between}: G1's grant arrival to G2's invoke arrival).
 */
final class TokenOrder {
    private final List<Map<String, Object>> regressions = new ArrayList<>();
    private long arrivalOrderDiffers;

    /**
     * Checks the grants of the exclusive locks.
     *
     * @param sections every section of the run; semaphore sections ({@code sem}) are skipped
     * @param faultsBetween the faults in effect on either section's client or the store between the two
     */
    TokenOrder(Collection<Section> sections, BiFunction<Section, Section, Set<Fault>> faultsBetween) {
        List<Section> grants = new ArrayList<>(sections);
        grants.removeIf(s -> s.lock.equals("sem"));
        grants.sort(Comparator.comparingLong(s -> s.grantAt));
        for (int j = 0; j < grants.size(); j++) {
            Section later = grants.get(j);
            Section worst = null;
            for (int i = 0; i < grants.size(); i++) {
                Section earlier = grants.get(i);
                if (i == j || !earlier.lock.equals(later.lock) || earlier.token < later.token) {
                    continue;
                }
                boolean duplicate = earlier.token == later.token && i < j;
                if (earlier.grantAt < later.invokeAt || duplicate) {
                    if (worst == null || earlier.token > worst.token) {
                        worst = earlier;
                    }
                } else if (earlier.grantAt < later.grantAt) {
                    arrivalOrderDiffers++;
                }
            }
            if (worst != null) {
                regressions.add(describe(worst, later, faultsBetween.apply(worst, later)));
            }
        }
    }

    private static Map<String, Object> describe(Section first, Section second, Set<Fault> faults) {
        Map<String, Object> pair = new LinkedHashMap<>();
        pair.put("lock", first.lock);
        pair.put("first_section", first.id);
        pair.put("first_client", first.client);
        pair.put("first_token", first.token);
        pair.put("first_grant_at_ms", first.grantAt);
        pair.put("second_section", second.id);
        pair.put("second_client", second.client);
        pair.put("second_token", second.token);
        pair.put("second_invoke_at_ms", second.invokeAt);
        pair.put("second_grant_at_ms", second.grantAt);
        pair.put("ms_between", second.invokeAt - first.grantAt);
        pair.put("faults", faults.stream().map(Fault::id).toList());
        return pair;
    }

    /** Grants whose token is not above that of a grant reported before their acquire began. */
    List<Map<String, Object>> regressions() {
        return regressions;
    }

    /** Pairs of concurrent acquires whose grant reports arrived in the order opposite to their tokens. */
    long arrivalOrderDiffers() {
        return arrivalOrderDiffers;
    }
}
