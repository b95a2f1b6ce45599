package dev.dlock.internal.lease;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The holders that passed one store hold on (the cohort hand-off): their lost signals wait for the end of the
 * hold, because a store that took the hold back (an operator's force-release, lost store state) took it
 * from every one of them, not only from the holder that learns of it.
 *
 * <p>Design: the lease the hold was passed to last ends the chain once ({@link #end}): with null when the
 * hold went back to the store as held (every earlier holder released cleanly, their signals are
 * cancelled), or with the reason when the store no longer held it (every earlier holder is told, with a
 * listener {@code lost} event each). A holder added after the end is settled at once with the same
 * outcome. A chain has at most {@code localHandoff} maxPasses links; a store grant that is never passed
 * has no chain.
 *
 * <p>Concurrency: the list and the outcome change under this object's monitor; the leases are settled
 * outside it.
 */
final class HoldChain {
    /** How each holder that passed the hold on settles its lost signal, given the outcome. */
    private final List<Consumer<String>> passedOn = new ArrayList<>();

    private boolean ended;
    private String lostReason;

    /** A holder passed the hold on: its lost signal waits for the end of the chain. */
    void add(Consumer<String> link) {
        String reason;
        synchronized (this) {
            if (!ended) {
                passedOn.add(link);
                return;
            }
            reason = lostReason;
        }
        link.accept(reason);
    }

    /**
     * The hold ended; idempotent, the first outcome counts.
     *
     * @param reason why the store no longer held it, or null when it was given back as held
     */
    void end(String reason) {
        List<Consumer<String>> links;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            lostReason = reason;
            links = new ArrayList<>(passedOn);
            passedOn.clear();
        }
        for (Consumer<String> link : links) {
            link.accept(reason);
        }
    }
}
