package dev.dlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One candidate in the election of a leader among the clients of a store, made from {@link
 * LockClient#election(String)}.
 *
 * <h2>How it works</h2>
 *
 * <p>The leader is the holder of an exclusive lock of the election's name: a <em>term</em> is a {@link
 * Lease} of that lock, renewed by the client's watchdog like any other. So everything a lease promises
 * holds for leadership: one leader at a time; {@link Lease#fencingToken()} of the term (its {@linkplain
 * #term() term number}) is strictly greater than every earlier leader's, so a deposed leader's writes can be
 * fenced; a leader whose lease is lost (its process paused past the lease, the store unreachable, the name
 * force-released) is told through the term's {@link Lease#whenLost()} and {@link Listener#deposed}.
 *
 * <h2>Life of a candidate</h2>
 *
 * <ul>
 *   <li>{@link #join()} starts campaigning: the candidate waits in the store for the lock, as long as it
 *       takes, retrying after store failures.
 *   <li>Elected, it leads until it {@linkplain #resign() resigns} or the term ends otherwise: lost, or its
 *       lease closed by the leader. Then it goes back to campaigning by itself.
 *   <li>{@link #resign()} ends the term and stops campaigning, so another candidate is elected; {@link
 *       #join()} again to stand once more. {@link #close()} resigns.
 * </ul>
 *
 * <p>A job that runs only on the leader, for as long as its term is valid:
 *
 * <!-- example: election-lead (LeaderElectionExamplesTest) -->
 * <pre>{@code
 * try (LeaderElection election = client.election("reports:scheduler")) {
 *     Lease term = election.awaitLeadership(Duration.ofMinutes(5));
 *     while (term.isValid()) {
 *         runOneBatch(term);
 *     }
 * }
 * }</pre>
 */
public interface LeaderElection extends AutoCloseable {
    /**
     * The election's name: the name of the lock whose holder leads.
     *
     * @return the name
     */
    String name();

    /**
     * Starts campaigning, unless this candidate already campaigns or leads.
     *
     * @return completes with the term when this candidate is next elected (at once when it leads now), or
     *     exceptionally: with a {@link java.util.concurrent.CancellationException} when it resigns first, with
     *     the client's {@link LockException} when the client is closed
     * @throws IllegalStateException if the client is closed
     */
    CompletableFuture<Lease> join();

    /**
     * Joins and waits to be elected.
     *
     * @param wait the longest time to wait
     * @return the term, valid when returned
     * @throws LockTimeoutException if the wait ran out; the candidate goes on campaigning
     * @throws LockException with an {@link InterruptedException} cause if the thread was interrupted; the
     *     candidate goes on campaigning and the interrupt flag is set again
     * @throws IllegalArgumentException if the wait is null or negative
     */
    Lease awaitLeadership(Duration wait);

    /**
     * The current term while this candidate leads.
     *
     * @return the valid term, or empty when not leader
     */
    Optional<Lease> term();

    /**
     * Whether this candidate leads now: it holds a term that is still valid. Never blocks.
     *
     * @return true while leader
     */
    boolean isLeader();

    /**
     * Ends the current term, if any (its lock is released, so a waiting candidate is elected), and stops
     * campaigning. Idempotent.
     *
     * @throws LockBackendException if the store could not be told of the release in time; the term is
     *     over for this candidate all the same, and the store frees the lock when the lease runs out
     */
    void resign();

    /** Resigns; see {@link #resign()}. */
    @Override
    void close();

    /**
     * Told of this candidate's terms. Called on a thread of the common {@code ForkJoinPool}, never a store
     * client's, one call at a time per election, in order: return quickly. Exceptions thrown are ignored.
     * Every method has an empty default.
     */
    interface Listener {
        /**
         * This candidate was elected.
         *
         * @param term the term's lease
         */
        default void elected(Lease term) {}

        /**
         * This candidate's term ended.
         *
         * @param term the term's lease
         * @param reason why the term was lost, or null when it ended cleanly (the candidate resigned, or closed
         *     the term's lease)
         */
        default void deposed(Lease term, LeaseLostException reason) {}
    }
}
