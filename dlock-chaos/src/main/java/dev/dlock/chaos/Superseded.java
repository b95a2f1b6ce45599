package dev.dlock.chaos;

import dev.dlock.chaos.Checker.Section;
import dev.dlock.chaos.History.Event;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The superseded-lease count of one store's run: a section of an exclusive lock still open (no release
 * yet) when another client's grant of it with a higher token arrived. A {@code lost} signal or {@code
 * told} check before the holder's next fenced step after that grant (even one before the grant) = the
 * holder was told; else {@code valid} (or a write of a section that does not check again) = it was not,
 * and the fenced step that followed was rejected (the fence caught it) or accepted (the successor had not
 * written yet). The ones not told are attributed to the faults in effect on that client or the store
 * during the section. Informational: {@link ToldFirst} is the check that fails a run.
 */
final class Superseded {
    private final Collection<Section> sections;
    private final Function<Section, Set<Fault>> faultsDuring;
    private final BiConsumer<String, String> attribute;

    /**
     * @param faultsDuring the faults in effect on a section's client or the store while it was open
     * @param attribute counts a figure ({@code not_told_rejected}, {@code not_told_accepted}) for a
     *     section's faults
     */
    Superseded(
            Collection<Section> sections,
            Function<Section, Set<Fault>> faultsDuring,
            BiConsumer<String, String> attribute) {
        this.sections = sections;
        this.faultsDuring = faultsDuring;
        this.attribute = attribute;
    }

    /** Counts the superseded sections by verdict; attributes the ones not told to their faults. */
    Map<String, Object> figures() {
        long told = 0;
        long rejected = 0;
        long accepted = 0;
        long quiet = 0;
        List<String> examples = new ArrayList<>();
        List<Section> grants = new ArrayList<>(sections);
        grants.sort(Comparator.comparingLong(s -> s.grantAt));
        for (Section old : grants) {
            if (old.lock.equals("sem")) {
                continue;
            }
            Section next = grants.stream()
                    .filter(g -> g.lock.equals(old.lock) && g.client != old.client)
                    // the store's order is the tokens' (checked above): a successor has a higher token,
                    // whichever grant report arrived first
                    .filter(g -> g.token > old.token && g.grantAt < old.endAt)
                    .findFirst()
                    .orElse(null);
            if (next == null) {
                continue;
            }
            String verdict = null;
            boolean sawValid = false;
            for (Event e : old.events) {
                String t = e.type();
                // a lost signal or failed check before the successor's grant tells the holder too
                if (!sawValid && (t.equals("lost") || t.equals("told"))) {
                    verdict = "told";
                    break;
                }
                if (e.at() <= next.grantAt) {
                    continue;
                }
                if (t.equals("valid")) {
                    sawValid = true;
                } else if ((sawValid || e.detail().startsWith("unchecked")) && t.endsWith("_rejected")) {
                    verdict = "rejected";
                    break;
                } else if ((sawValid || e.detail().startsWith("unchecked"))
                        && (t.equals("claim_ok") || t.equals("write_ok"))) {
                    verdict = "accepted";
                    break;
                }
            }
            if (verdict == null) {
                quiet++;
                continue;
            }
            switch (verdict) {
                case "told" -> told++;
                case "rejected" -> rejected++;
                default -> accepted++;
            }
            if (!verdict.equals("told")) {
                attribute.accept(old.id, "not_told_" + verdict);
                if (examples.size() < 20) {
                    examples.add(old.lock + ": section " + old.id + " (token " + old.token + ") superseded by "
                            + next.id + " (token " + next.token + ") at " + next.grantAt + " ms, fence " + verdict
                            + ", faults " + faultsDuring.apply(old));
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("told_before_next_fenced_step", told);
        out.put("not_told_fence_rejected", rejected);
        out.put("not_told_fence_accepted", accepted);
        out.put("no_later_fenced_step", quiet);
        out.put("not_told_examples", examples);
        return out;
    }
}
