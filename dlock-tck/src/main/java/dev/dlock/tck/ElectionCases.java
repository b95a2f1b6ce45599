package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LeaderElection;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Leader election ({@link LockClient#election}): one leader at a time across clients, terms that increase,
 * a leader whose term ran out no longer valid when the next is elected, resign handing over, and the
 * refusals. Every elected term is checked against all earlier terms at the moment of its election.
 */
abstract class ElectionCases extends ContractSection {
    ElectionCases(LockContractTest contract) {
        super(contract);
    }

    /** Records each election and checks, when it happens, that no earlier term is still valid. */
    /**
     * Checks each election against every earlier one, by token rather than by the order the listener
     * calls come in: candidates of different clients are told on different threads, so a term's {@code
     * elected} may run after the next term's. Whatever the order, once both terms were granted the one
     * with the lower token must no longer be valid (validity never comes back, so a lower term valid now
     * was valid when the higher one was granted), and no two terms share a token. The order of the terms
     * is checked where the elections happen one after the other (the cases' own loops).
     */
    static final class Terms implements LeaderElection.Listener {
        final List<Lease> elected = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();

        @Override
        public synchronized void elected(Lease term) {
            for (Lease earlier : elected) {
                if (earlier.fencingToken() == term.fencingToken()) {
                    violations.add("two terms with token " + term.fencingToken());
                    continue;
                }
                Lease lower = earlier.fencingToken() < term.fencingToken() ? earlier : term;
                Lease higher = lower == earlier ? term : earlier;
                if (lower.isValid()) {
                    violations.add("term " + higher.fencingToken() + " was elected while term " + lower.fencingToken()
                            + " was still valid");
                }
            }
            elected.add(term);
        }
    }

    @Test
    void candidatesOfManyClientsLeadOneAtATimeWithIncreasingTerms() throws Exception {
        Terms terms = new Terms();
        List<LeaderElection> candidates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            candidates.add(client().election("leader", terms));
        }
        candidates.forEach(LeaderElection::join);
        long previousTerm = Long.MIN_VALUE;
        for (int round = 0; round < 6; round++) {
            LeaderElection leader = awaitOneLeader(candidates);
            Lease term = leader.term().orElseThrow();
            assertThat(candidates.stream().filter(LeaderElection::isLeader)).containsExactly(leader);
            assertThat(term.fencingToken()).as("round %s's term", round).isGreaterThan(previousTerm);
            previousTerm = term.fencingToken();
            leader.resign();
            assertThat(term.isValid()).isFalse();
            assertThat(leader.isLeader()).isFalse();
            leader.join(); // stands again, behind the others
        }
        awaitTrue(LONG_WAIT, () -> terms.elected.size() >= 6); // the listener runs beside isLeader()
        assertThat(terms.violations).isEmpty();
    }

    @Test
    void aLeaderWhoseTermRanOutIsNoLongerValidWhenTheNextIsElected() throws Exception {
        Terms terms = new Terms();
        List<LeaseLostException> lost = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<LeaderElection> firstElection =
                new java.util.concurrent.atomic.AtomicReference<>();
        // A's term is never renewed: it runs out after the short lease, as a paused leader's would. A
        // candidate whose term ran out stands again by itself and may win again before B (its own wait
        // can reach the store first); told of the loss, A resigns, so B is elected within two terms.
        LeaderElection first = client(b -> b.leaseTime(shortLease()).renewal(false))
                .election("expiring", new LeaderElection.Listener() {
                    @Override
                    public void elected(Lease term) {
                        terms.elected(term);
                    }

                    @Override
                    public void deposed(Lease term, LeaseLostException reason) {
                        if (reason != null) {
                            lost.add(reason);
                            firstElection.get().resign();
                        }
                    }
                });
        firstElection.set(first);
        Lease firstTerm = first.awaitLeadership(LONG_WAIT);
        LeaderElection second = client().election("expiring", terms);
        Lease secondTerm = second.join().get(shortLease().toMillis() * 6 + LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(secondTerm.fencingToken()).isGreaterThan(firstTerm.fencingToken());
        assertThat(firstTerm.isValid()).isFalse(); // what the election of B checked, at its moment
        // The lost signal itself comes from the watchdog's tick, which may run a little after the deadline.
        assertThat(firstTerm.whenLost().get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .isNotNull();
        awaitTrue(LONG_WAIT, () -> !lost.isEmpty());
        assertThat(terms.violations).isEmpty();
        second.close();
    }

    @Test
    void resignHandsLeadershipToAWaitingCandidate() throws Exception {
        Terms terms = new Terms();
        LeaderElection a = client().election("handover", terms);
        LeaderElection b = client().election("handover", terms);
        Lease aTerm = a.awaitLeadership(LONG_WAIT);
        CompletableFuture<Lease> bElected = b.join();
        assertThat(b.isLeader()).isFalse();
        assertThat(bElected).isNotDone();

        a.resign();
        Lease bTerm = bElected.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(bTerm.fencingToken()).isGreaterThan(aTerm.fencingToken());
        assertThat(aTerm.whenLost()).isCancelled(); // a resignation is a clean end, not a loss
        assertThat(a.isLeader()).isFalse();
        assertThat(a.term()).isEmpty();

        CompletableFuture<Lease> aAgain = a.join();
        assertThat(aAgain).isNotDone(); // b leads
        b.resign();
        assertThat(aAgain.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS).fencingToken())
                .isGreaterThan(bTerm.fencingToken());
        assertThat(terms.violations).isEmpty();
        a.resign();
        a.resign(); // idempotent
    }

    @Test
    void aResignedCandidateStopsWaitingAndLeavesNothingHeld() throws Exception {
        Lease held = client().lock("left").acquire(LONG_WAIT);
        LeaderElection candidate = client().election("left");
        CompletableFuture<Lease> elected = candidate.join();
        Thread.sleep(200); // waiting in the store
        candidate.resign();
        assertThat(elected).isCompletedExceptionally();
        assertThatThrownBy(elected::get)
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(CancellationException.class);
        held.close();
        // The cancelled wait must not take the lock later: another client gets it at once.
        try (Lease next = client().lock("left").acquire(LONG_WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
        assertThat(candidate.isLeader()).isFalse();
    }

    @Test
    void badInputAndAClosedClientAreRefused() throws Exception {
        LockClient client = client();
        assertThatThrownBy(() -> client.election("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.election("x", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("listener");
        LeaderElection election = client.election("closed");
        assertThatThrownBy(() -> election.awaitLeadership(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wait");
        client.close();
        assertThatThrownBy(() -> election.awaitLeadership(LONG_WAIT))
                .isInstanceOf(LockException.class)
                .hasMessageContaining("closed");
        assertThat(election.isLeader()).isFalse();
    }

    private static LeaderElection awaitOneLeader(List<LeaderElection> candidates) throws InterruptedException {
        long deadline = System.nanoTime() + LONG_WAIT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            for (LeaderElection candidate : candidates) {
                if (candidate.isLeader()) {
                    return candidate;
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no leader elected within " + LONG_WAIT);
    }
}
