package dev.dlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A Spring Boot application written for ShedLock ({@code @EnableSchedulerLock}, {@code @Scheduled} with
 * {@code @SchedulerLock}, {@code LockAssert}) runs on dlock with one bean added: the {@link LockProvider},
 * on the {@link LockClient} the dlock starter makes from {@code dlock.uri}. Two instances of it share one
 * store, as two nodes would.
 */
class SpringSchedulerLockTest {
    static final long LOCK_AT_LEAST_FOR_MILLIS = 400;
    static final List<Long> STARTS = Collections.synchronizedList(new ArrayList<>());
    static final AtomicInteger INSIDE = new AtomicInteger();
    static final AtomicInteger MOST_INSIDE = new AtomicInteger();

    /** The application's own code, as it was written for ShedLock's JDBC or Redis provider. */
    static class ReportJob {
        @Scheduled(fixedDelay = 10)
        @SchedulerLock(name = "nightly-report", lockAtLeastFor = "PT0.4S")
        public void run() throws InterruptedException {
            LockAssert.assertLocked();
            STARTS.add(System.nanoTime());
            MOST_INSIDE.accumulateAndGet(INSIDE.incrementAndGet(), Math::max);
            Thread.sleep(20);
            INSIDE.decrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    static class ReportApplication {
        @Bean
        ReportJob reportJob() {
            return new ReportJob();
        }

        /** The one line that moves the application to dlock. */
        @Bean
        LockProvider lockProvider(LockClient dlock) {
            return DlockLockProvider.of(dlock);
        }
    }

    private static ConfigurableApplicationContext node() {
        return new SpringApplicationBuilder(ReportApplication.class)
                .web(WebApplicationType.NONE)
                .properties(Map.of("spring.main.banner-mode", "off", "dlock.uri", "mem:shedlock-boot"))
                .run();
    }

    @Test
    void twoNodesRunTheJobOneAtATimeAndNoSoonerThanLockAtLeastForApart() throws Exception {
        List<Long> starts;
        try (ConfigurableApplicationContext first = node();
                ConfigurableApplicationContext second = node()) {
            assertThat(first.getBean(LockProvider.class)).isInstanceOf(DlockLockProvider.class);
            Thread.sleep(2_500);
            // Before either node stops: closing a LockClient releases its leases, minimum holds included,
            // so the other node may run the job at once while the first shuts down.
            synchronized (STARTS) {
                starts = List.copyOf(STARTS);
            }
        }
        assertThat(starts).as("runs").hasSizeGreaterThanOrEqualTo(3);
        assertThat(MOST_INSIDE.get()).as("runs at once").isEqualTo(1);
        for (int i = 1; i < starts.size(); i++) {
            long gapMillis = TimeUnit.NANOSECONDS.toMillis(starts.get(i) - starts.get(i - 1));
            // The hold counts from the grant, a little before the job's first line records its start.
            assertThat(gapMillis).as("gap before run %d", i).isGreaterThanOrEqualTo(LOCK_AT_LEAST_FOR_MILLIS - 10);
        }
    }
}
