package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The order rule of Redlock rounds: a follow-up to a master never goes ahead of its request there. */
class RoundTest {
    private static final List<String> MASTERS = List.of("a", "b", "c");

    @Test
    void aFollowUpWaitsForThatMastersAnswerAlthoughTheRoundIsDecided() throws Exception {
        CompletableFuture<Boolean> slow = new CompletableFuture<>();
        Round<Boolean> round = roundWhereOneMasterIsPending(2, slow, 10_000);
        assertThat(round.decided().get(1, TimeUnit.SECONDS)).isEqualTo(Round.Outcome.QUORUM);

        AtomicInteger sent = new AtomicInteger();
        CompletionStage<Integer> toAnswered =
                round.after(0, () -> CompletableFuture.completedFuture(sent.incrementAndGet()));
        assertThat(sent).as("a master that answered gets its follow-up at once").hasValue(1);
        assertThat(toAnswered.toCompletableFuture().get(1, TimeUnit.SECONDS)).isEqualTo(1);

        CompletionStage<Integer> toSlow =
                round.after(2, () -> CompletableFuture.completedFuture(sent.incrementAndGet()));
        Thread.sleep(100);
        assertThat(sent).as("the slow master's follow-up waits for its answer").hasValue(1);
        slow.complete(false);
        assertThat(toSlow.toCompletableFuture().get(1, TimeUnit.SECONDS)).isEqualTo(2);
    }

    @Test
    void aFollowUpGoesOnceThatMastersTimeoutPassedEvenWithoutAnAnswer() throws Exception {
        CompletableFuture<Boolean> silent = new CompletableFuture<>();
        Round<Boolean> round = roundWhereOneMasterIsPending(1, silent, 200);
        AtomicInteger sent = new AtomicInteger();
        long start = System.nanoTime();
        CompletionStage<Integer> followUp =
                round.after(1, () -> CompletableFuture.completedFuture(sent.incrementAndGet()));
        assertThat(followUp.toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("not before the master's timeout")
                .isGreaterThanOrEqualTo(150);
        assertThat(silent).as("the answer itself never came").isNotDone();
    }

    /** A quorum-2 round on three masters: each grants at once but {@code pending}, which answers with it. */
    private static Round<Boolean> roundWhereOneMasterIsPending(
            int pending, CompletableFuture<Boolean> answer, long timeoutMillis) {
        return Round.send(
                MASTERS,
                2,
                timeoutMillis,
                Boolean::booleanValue,
                String::valueOf,
                i -> i == pending ? answer : CompletableFuture.completedFuture(true));
    }
}
