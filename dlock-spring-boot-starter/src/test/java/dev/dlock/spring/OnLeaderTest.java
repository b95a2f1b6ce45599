package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockClient;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@link OnLeader}: two applications on one store campaign from their start; only the leader's calls run,
 * the other's are skipped (null, an empty Optional); the leader's stop (its client still open) hands over
 * at once; calls after the stop are skipped; a restart campaigns again; a blank name and a primitive return type fail the start.
 */
class OnLeaderTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DlockAutoConfiguration.class))
            .withPropertyValues("dlock.uri=mem:on-leader-" + System.nanoTime(), "dlock.namespace=leaders");

    /** Jobs that every instance has and one should run. */
    public static class Jobs {
        private final AtomicInteger runs = new AtomicInteger();

        /**
         * How often {@link #report()} ran (not advised: the bean is a class proxy).
         *
         * @return the count
         */
        public int runs() {
            return runs.get();
        }

        /** Counts its runs. */
        @OnLeader("reports")
        public void report() {
            runs.incrementAndGet();
        }

        /**
         * A result only the leader makes.
         *
         * @return the summary
         */
        @OnLeader("reports")
        public Optional<String> summary() {
            return Optional.of("summary");
        }

        /**
         * A result only the leader makes.
         *
         * @return the title
         */
        @OnLeader("reports")
        public String title() {
            return "title";
        }
    }

    /** A job that could not return anything when skipped. */
    public static class PrimitiveJob {
        /**
         * Cannot be skipped.
         *
         * @return a count
         */
        @OnLeader("reports")
        public int count() {
            return 1;
        }
    }

    /** A job without an election. */
    public static class UnnamedJob {
        /** Has no election. */
        @OnLeader(" ")
        public void run() {}
    }

    @Test
    void onlyTheLeaderRunsItsCallsAndItsStopHandsOverAtOnce() throws Exception {
        runner.withBean(Jobs.class).run(first -> runner.withBean(Jobs.class).run(second -> {
            Jobs a = first.getBean(Jobs.class);
            Jobs b = second.getBean(Jobs.class);
            awaitTrue(() -> {
                a.report();
                b.report();
                return a.runs() + b.runs() > 0;
            });
            boolean aLeads = a.runs() > 0;
            Jobs leader = aLeads ? a : b;
            Jobs follower = aLeads ? b : a;
            for (int i = 0; i < 20; i++) {
                a.report();
                b.report();
            }
            assertThat(follower.runs()).isZero();
            assertThat(leader.runs()).isGreaterThanOrEqualTo(21);
            assertThat(follower.summary()).isEmpty();
            assertThat(follower.title()).isNull();
            assertThat(leader.summary()).contains("summary");
            assertThat(leader.title()).isEqualTo("title");
            String term = (aLeads ? first : second)
                    .getBean(LockClient.class)
                    .describe("reports")
                    .toString();
            assertThat(term).as("the leader holds the election's lock").isNotEmpty();

            (aLeads ? first : second).stop(); // resigns; its LockClient stays open
            long stopped = System.nanoTime();
            awaitTrue(() -> {
                follower.report();
                return follower.runs() > 0;
            });
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped))
                    .as("handed over, not run out")
                    .isLessThan(2_000);
            int before = leader.runs();
            leader.report();
            assertThat(leader.runs())
                    .as("skipped after its application stopped")
                    .isEqualTo(before);

            (aLeads ? first : second).start(); // campaigns again, behind the new leader
            for (int i = 0; i < 5; i++) {
                leader.report();
            }
            assertThat(leader.runs()).isEqualTo(before);
            int followerRuns = follower.runs();
            follower.report();
            assertThat(follower.runs()).isEqualTo(followerRuns + 1);
        }));
    }

    @Test
    void aPrimitiveReturnTypeOrABlankNameFailsTheStart() {
        runner.withBean(PrimitiveJob.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootMessage(context.getStartupFailure()))
                    .contains("@OnLeader on " + PrimitiveJob.class.getName() + ".count() returns int");
        });
        runner.withBean(UnnamedJob.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootMessage(context.getStartupFailure()))
                    .contains("@OnLeader on " + UnnamedJob.class.getName() + ".run() needs an election name");
        });
    }

    private static String rootMessage(Throwable failure) {
        while (failure.getCause() != null && !(failure instanceof IllegalStateException)) {
            failure = failure.getCause();
        }
        return failure.getMessage();
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("in time").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
