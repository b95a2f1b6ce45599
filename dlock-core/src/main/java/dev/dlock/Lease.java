package dev.dlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Proof that this process holds a lock, or one permit of a semaphore, until it is closed or lost.
 *
 * <p>A lease is not bound to a thread: any thread may use and close it, which suits async code and
 * virtual threads. It is renewed in the background while held (unless renewal was switched off), and
 * it is <em>lost</em> when the store no longer holds it for us: a renewal is refused, renewals fail
 * until the local deadline passes, or the store's session ends. Losing is reported three ways:
 * {@link #isValid()} turns false, {@link #checkValid()} throws, and {@link #whenLost()} completes.
 *
 * <p>Before writing to a shared resource, pass {@link #fencingToken()} along and let the resource
 * reject tokens older than the newest it has seen; that is what makes a paused holder harmless.
 *
 * <pre>{@code
 * try (Lease lease = client.lock("ledger:42").acquire(Duration.ofSeconds(5))) {
 *     ledger.write(entry, lease.fencingToken());
 * }
 * }</pre>
 */
public interface Lease extends AutoCloseable {
    /**
     * The lock name, or for a multi-lock the sorted names joined with {@code ","}.
     *
     * @return the name
     */
    String name();

    /**
     * The fencing token of this grant: strictly greater than that of every earlier grant of the same
     * lock, to any client.
     *
     * @return the token
     * @throws IllegalStateException for a multi-lock lease, which has one token per name (see {@link
     *     #parts()})
     */
    long fencingToken();

    /**
     * The single-name leases a multi-lock lease is made of, in name order; a list of just this lease
     * otherwise.
     *
     * @return the parts
     */
    List<Lease> parts();

    /**
     * Whether the lease is still held: not closed, not lost, the local deadline not passed, and the
     * store's session (where it has one) alive. Never blocks.
     *
     * @return true while held
     */
    boolean isValid();

    /**
     * Throws unless {@link #isValid()}.
     *
     * @throws LeaseLostException naming the lock and why it was lost
     */
    void checkValid();

    /**
     * Time left before the local deadline, which is computed conservatively from the time the last
     * grant or renewal was sent, minus a drift margin. On a store whose holds live with a client session
     * (ZooKeeper, etcd), no more than the time the session is certainly kept: {@link #isValid()} turns false
     * when either runs out.
     *
     * @return the time left, zero when lost or closed
     */
    Duration remaining();

    /**
     * How long this lease has been held: the time since its grant request was sent, measured with the
     * monotonic clock. For a multi-lock lease, since the last of its parts was granted.
     *
     * @return the time held so far; it keeps growing after the lease is closed or lost
     */
    Duration heldFor();

    /**
     * Asks the store now to keep the lease for {@code leaseTime} from now; later automatic renewals use
     * this time as well.
     *
     * <p>While the request is on its way, and if it gets no answer, the lease's local deadline is the
     * earlier of the old one and the one {@code leaseTime} gives, since the store may apply a shorter time
     * before it answers. An answer that arrives after the new deadline cannot be trusted: the lease is
     * lost ({@link #whenLost()} completes) and the engine gives the hold back.
     *
     * @param leaseTime the new lease time: at least 10 ms, at most 365 days
     * @throws LeaseLostException if the store no longer holds the lease, or its answer came after the new
     *     deadline
     * @throws LockBackendException if the store did not answer in time (the lease stays held, renewed on
     *     its old lease time, until the deadline above)
     * @throws IllegalArgumentException if the time is null or out of range
     */
    void extend(Duration leaseTime);

    /**
     * Completes with the reason when the lease is lost. It is cancelled when the lease is closed
     * normally, so dependent actions do not linger.
     *
     * @return a future that completes at most once
     */
    CompletableFuture<LeaseLostException> whenLost();

    /**
     * Releases the lease {@code delay} from now, without a thread waiting: a minimum hold, so that a job
     * that ends early does not run again on another node (one whose clock is a little behind) before the
     * hold's time is up. Until then the lease stays held and renewed, and a caller of this client waiting
     * for the lock gets it then; use {@code lockAtLeast.minus(heldFor())} to count the hold from the grant.
     * A delay of zero releases now, as {@link #close()} does.
     *
     * <p>If the {@link LockClient} closes first, the lease is not released: the store is asked to keep it
     * for the time left and then lets it expire (Redis, SQL, memory; on Redis for at most its declared
     * {@code maxLease}). ZooKeeper and etcd hold a lease only as long as the client's session, so there it
     * ends when the client closes.
     *
     * <p>The lease is the engine's from this call on: a loss before the release is still reported through
     * {@link #whenLost()}, and a failed release is retried, as for {@link #close()}.
     *
     * @param delay how long from now the lease stays held; zero or more, at most 365 days
     * @throws IllegalArgumentException if the delay is null, negative or over 365 days (the lease stays held)
     * @throws LockBackendException with a delay of zero, as {@link #close()}
     */
    void closeAfter(Duration delay);

    /**
     * Releases the lease. Idempotent: closing a closed or lost lease does nothing.
     *
     * @throws LockBackendException if the store could not be told in time; the store then frees the
     *     lock when the lease runs out
     */
    @Override
    void close();
}
