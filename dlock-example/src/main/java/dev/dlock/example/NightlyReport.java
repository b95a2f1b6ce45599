package dev.dlock.example;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** Triggers the nightly report on every instance; {@link Shop#nightlyReport} lets one of them run it. */
@Component
public class NightlyReport {
    private final Shop shop;

    /**
     * Created by Spring.
     *
     * @param shop the locked work
     */
    public NightlyReport(Shop shop) {
        this.shop = shop;
    }

    /** Runs on every instance at the interval; the lock decides which one does the work. */
    @Scheduled(fixedDelayString = "${example.report-interval:1h}")
    public void run() {
        shop.nightlyReport(null);
    }
}
