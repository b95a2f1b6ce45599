package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LeaderElection;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The example of {@code LeaderElection}'s javadoc, run against the in-memory store; the javadoc holds a
 * copy of the region marked below, and {@link #javadocHoldsThisExample()} checks they are the same.
 */
class LeaderElectionExamplesTest {
    private static final Path LEADER_ELECTION = Path.of("../dlock-core/src/main/java/dev/dlock/LeaderElection.java");
    private static final Path THIS_FILE = Path.of("src/test/java/dev/dlock/tck/LeaderElectionExamplesTest.java");

    private final List<Long> batches = new ArrayList<>();

    @Test
    void javadocHoldsThisExample() {
        assertThat(JavadocExamples.check(LEADER_ELECTION, THIS_FILE)).containsExactly("election-lead");
    }

    @Test
    void leadsWhileTheTermIsValid() {
        try (LockClient client = LockClient.connect("mem:")) {
            // example: election-lead
            try (LeaderElection election = client.election("reports:scheduler")) {
                Lease term = election.awaitLeadership(Duration.ofMinutes(5));
                while (term.isValid()) {
                    runOneBatch(term);
                }
            }
            // end example
            assertThat(batches).hasSize(3).allMatch(token -> token > 0);
            // close() resigned: a campaign that was on its way is cancelled, and a grant it may still get is
            // given back at once (asynchronously), so the lock is free within moments.
            try (Lease next = client.lock("reports:scheduler").acquire(Duration.ofSeconds(5))) {
                assertThat(next.fencingToken()).isGreaterThan(batches.get(2));
            }
        }
    }

    private void runOneBatch(Lease term) {
        batches.add(term.fencingToken());
        if (batches.size() == 3) {
            term.close(); // ends the example's loop, as a lost term would
        }
    }
}
