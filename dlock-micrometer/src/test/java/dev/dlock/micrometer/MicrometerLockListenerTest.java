package dev.dlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The listener on a client built by hand (no Spring), with real traffic on the in-memory store. */
class MicrometerLockListenerTest {
    final MeterRegistry registry = new SimpleMeterRegistry();
    final MicrometerLockListener metrics = MicrometerLockListener.builder(registry)
            .namePatterns(List.of("job:*", "order:*"))
            .build();

    double count(String meter, String name, String... tags) {
        var search = registry.find(meter).tag("name", name);
        for (int i = 0; i < tags.length; i += 2) {
            search = search.tag(tags[i], tags[i + 1]);
        }
        Timer timer = search.timer();
        if (timer != null) {
            return timer.count();
        }
        var counter = search.counter();
        assertThat(counter).as("%s %s %s", meter, name, List.of(tags)).isNotNull();
        return counter.count();
    }

    /** Events reach the listener on the client's listener thread, so counts are awaited. */
    void awaitCount(double expected, String meter, String name, String... tags) throws InterruptedException {
        Traffic.eventually(() -> count(meter, name, tags) == expected, meter + " " + name + " " + List.of(tags));
    }

    double gauge(String meter, String name) {
        return registry.get(meter).tag("name", name).gauge().value();
    }

    @Test
    void recordsEveryOutcomeReasonAndTheQueue() throws Exception {
        List<Double> queuedSeen = new ArrayList<>();
        List<Double> activeSeen = new ArrayList<>();
        Traffic.run(metrics, () -> {
            try {
                Traffic.eventually(() -> gauge(MicrometerLockListener.QUEUE, "job:*") == 2, "two callers queued");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            queuedSeen.add(gauge(MicrometerLockListener.QUEUE, "job:*"));
            activeSeen.add(gauge(MicrometerLockListener.ACTIVE, "job:*"));
        });
        assertThat(queuedSeen).containsExactly(2.0);
        assertThat(activeSeen).as("the other client holds it, not ours").containsExactly(0.0);
        awaitCount(3, MicrometerLockListener.ACQUIRE, "job:*", "outcome", "granted");
        awaitCount(1, MicrometerLockListener.ACQUIRE, "job:*", "outcome", "timeout");
        awaitCount(1, MicrometerLockListener.ACQUIRE, "job:*", "outcome", "rejected");
        awaitCount(3, MicrometerLockListener.HELD, "job:*");
        awaitCount(1, MicrometerLockListener.LOST, "order:*", "reason", "revoked");
        awaitCount(1, MicrometerLockListener.LOST, "order:*", "reason", "deadline");
        Traffic.eventually(() -> gauge(MicrometerLockListener.QUEUE, "job:*") == 0, "the queue is empty again");
        // everything expected arrived; these stay untouched
        assertThat(count(MicrometerLockListener.ACQUIRE, "job:*", "outcome", "failed"))
                .isZero();
        assertThat(count(MicrometerLockListener.LOST, "order:*", "reason", "other"))
                .isZero();
        assertThat(count(MicrometerLockListener.ACQUIRE, "other", "outcome", "granted"))
                .as("no traffic on other names")
                .isZero();
        assertThat(registry.get(MicrometerLockListener.HELD)
                        .tag("name", "job:*")
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .as("the first hold slept 20 ms")
                .isGreaterThanOrEqualTo(20);
    }

    /** The store's held-back answers (a restarted Redis, HoldBackTest) are counted per name pattern. */
    @Test
    void heldBackAnswersAreCountedPerPattern() {
        metrics.heldBack("job:nightly", Duration.ofSeconds(2));
        metrics.heldBack("job:nightly", Duration.ofSeconds(1));
        metrics.heldBack("cart:7", Duration.ofSeconds(1));
        assertThat(count(MicrometerLockListener.HELD_BACK, "job:*")).isEqualTo(2);
        assertThat(count(MicrometerLockListener.HELD_BACK, "other")).isEqualTo(1);
        assertThat(count(MicrometerLockListener.HELD_BACK, "order:*")).isZero();
    }

    @Test
    void activeLeasesGaugeCountsTheClientsLeasesPerPattern() {
        try (LockClient client =
                LockClient.builder(Traffic.store()).listener(metrics).build()) {
            metrics.bindActiveLeases(client);
            try (Lease a = client.lock("job:1").acquire();
                    Lease b = client.lock("job:2").acquire();
                    Lease c = client.lock("misc").acquire()) {
                assertThat(gauge(MicrometerLockListener.ACTIVE, "job:*")).isEqualTo(2);
                assertThat(gauge(MicrometerLockListener.ACTIVE, "other")).isEqualTo(1);
                assertThat(gauge(MicrometerLockListener.ACTIVE, "order:*")).isZero();
            }
            assertThat(gauge(MicrometerLockListener.ACTIVE, "job:*")).isZero();
        }
    }

    @Test
    void meterCountIsBoundedByThePatterns() throws Exception {
        try (LockClient client =
                LockClient.builder(Traffic.store()).listener(metrics).build()) {
            int before = registry.getMeters().size();
            for (int i = 0; i < 50; i++) {
                client.lock("job:" + i).acquire().close();
                client.lock("random-" + i).acquire().close();
            }
            assertThat(registry.getMeters()).hasSize(before);
        }
    }

    @Test
    void histogramsCanBeSwitchedOffAndBadPatternsAreRefused() {
        PrometheusMeterRegistry withBuckets = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        MicrometerLockListener.builder(withBuckets).build().acquired("x", Duration.ofMillis(3));
        assertThat(withBuckets.scrape()).contains("dlock_acquire_seconds_bucket{");
        PrometheusMeterRegistry plain = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        MicrometerLockListener.builder(plain).histograms(false).build().acquired("x", Duration.ofMillis(3));
        assertThat(plain.scrape()).contains("dlock_acquire_seconds_count{").doesNotContain("_bucket");
        assertThatThrownBy(() -> MicrometerLockListener.builder(plain).namePatterns(List.of("job:*", " ")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty pattern");
    }
}
