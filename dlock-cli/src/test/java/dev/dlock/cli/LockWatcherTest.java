package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockBackendException;
import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** How the console derives events from successive snapshots, on a fake store and a fake clock. */
class LockWatcherTest {
    final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    final AtomicLong millis = new AtomicLong(1_700_000_000_000L);
    List<LockInfo> snapshot = List.of();
    RuntimeException failure;
    Duration heldBack = Duration.ZERO;
    RuntimeException heldBackFailure;
    int heldBackAsked;
    final LockWatcher watcher = new LockWatcher(
            () -> {
                if (failure != null) {
                    throw failure;
                }
                return snapshot;
            },
            () -> {
                heldBackAsked++;
                if (heldBackFailure != null) {
                    throw heldBackFailure;
                }
                return heldBack;
            },
            nanos::get,
            millis::get,
            60_000);

    void advance(long ms) {
        nanos.addAndGet(ms * 1_000_000);
        millis.addAndGet(ms);
    }

    static LockInfo held(String name, String owner, long token, Long leftMillis, int waiters) {
        return new LockInfo(
                name,
                LockKind.LOCK,
                List.of(new LockInfo.Holder(
                        owner, token, "exclusive", leftMillis == null ? null : Duration.ofMillis(leftMillis))),
                waiters);
    }

    List<String> types() {
        List<String> types = new ArrayList<>();
        for (LockWatcher.Event e : watcher.eventsSince(0)) {
            types.add(e.type() + " " + e.name() + " " + e.token());
        }
        return types;
    }

    @Test
    void holdersSeenAtStartAreNoGrantsLaterOnesAre() {
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        assertThat(types()).isEmpty();
        advance(1_000);
        snapshot = List.of(held("a", "1@h#x", 5, 29_000L, 0), held("b", "2@h#y", 7, 30_000L, 2));
        watcher.poll();
        assertThat(types()).containsExactly("grant b 7");

        LockWatcher.View view = watcher.view();
        assertThat(view.locks()).extracting(LockWatcher.LockView::name).containsExactly("a", "b");
        LockWatcher.HolderView a = view.locks().get(0).holders().get(0);
        assertThat(a.seenAtStart()).isTrue();
        assertThat(a.heldForMillis()).isEqualTo(1_000);
        assertThat(view.locks().get(1).waiters()).isEqualTo(2);
        assertThat(view.locks().get(1).holders().get(0).seenAtStart()).isFalse();

        advance(400);
        assertThat(watcher.view().locks().get(1).holders().get(0).leaseLeftMillis())
                .as("lease left counts down between polls")
                .isEqualTo(29_600);
    }

    @Test
    void goneBeforeItsLeaseCouldRunOutIsARelease() {
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        advance(1_000);
        snapshot = List.of();
        watcher.poll();
        assertThat(types()).containsExactly("release a 5");
    }

    @Test
    void renewedLeaseThatRanOutIsLostUnrenewedOneIsAnExpiry() {
        snapshot = List.of(held("r", "1@h#x", 5, 3_000L, 0), held("e", "2@h#y", 6, 3_000L, 0));
        watcher.poll();
        advance(1_000);
        // r was renewed (3 s left again), e was not (2 s left)
        snapshot = List.of(held("r", "1@h#x", 5, 3_000L, 0), held("e", "2@h#y", 6, 2_000L, 0));
        watcher.poll();
        advance(1_000);
        snapshot = List.of(held("r", "1@h#x", 5, 2_000L, 0), held("e", "2@h#y", 6, 1_000L, 0));
        watcher.poll();
        advance(2_050);
        snapshot = List.of();
        watcher.poll();
        assertThat(types()).containsExactlyInAnyOrder("lost r 5", "expiry e 6");
    }

    @Test
    void withoutLeaseTimesEveryEndIsARelease() {
        snapshot = List.of(held("z", "1@h#x", 5, null, 0));
        watcher.poll();
        advance(60_000);
        snapshot = List.of();
        watcher.poll();
        assertThat(types()).containsExactly("release z 5");
    }

    @Test
    void forceReleaseMarksOnlyTheHoldersKnownWhenItWasAsked() {
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        watcher.forceReleasing("a");
        watcher.forceReleaseDone("a", true);
        advance(500);
        snapshot = List.of(held("a", "2@h#y", 9, 30_000L, 0));
        watcher.poll();
        advance(500);
        snapshot = List.of();
        watcher.poll();
        assertThat(types()).containsExactly("force-release a 5", "grant a 9", "release a 9");
    }

    @Test
    void forceReleaseThatRemovedNothingLeavesNoMark() {
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        watcher.forceReleasing("a");
        watcher.forceReleaseDone("a", false);
        advance(500);
        snapshot = List.of();
        watcher.poll();
        assertThat(types()).containsExactly("release a 5");
    }

    @Test
    void failedPollKeepsTheViewAndReportsTheError() {
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        failure = new LockBackendException("store down");
        advance(1_000);
        watcher.poll();
        LockWatcher.View view = watcher.view();
        assertThat(view.error()).contains("store down");
        assertThat(view.locks()).hasSize(1);
        assertThat(types()).isEmpty();
        failure = null;
        watcher.poll();
        assertThat(watcher.view().error()).isNull();
    }

    @Test
    void eventsOutsideTheWindowAreDroppedAndSinceFilters() {
        watcher.poll();
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        long first = watcher.eventsSince(0).get(0).seq();
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0), held("b", "1@h#x", 6, 30_000L, 0));
        advance(30_000);
        watcher.poll();
        assertThat(watcher.eventsSince(first))
                .extracting(LockWatcher.Event::name)
                .containsExactly("b");
        advance(31_000);
        assertThat(watcher.eventsSince(0)).extracting(LockWatcher.Event::name).containsExactly("b");
    }

    @Test
    void lockWithWaitersButNoHolderIsShown() {
        snapshot = List.of(
                new LockInfo("q", LockKind.FAIR, List.of(), 3), new LockInfo("idle", LockKind.FAIR, List.of(), 0));
        watcher.poll();
        assertThat(watcher.view().locks()).singleElement().satisfies(lock -> {
            assertThat(lock.name()).isEqualTo("q");
            assertThat(lock.waiters()).isEqualTo(3);
            assertThat(lock.holders()).isEmpty();
        });
    }

    @Test
    void theHoldBackAfterALostStateIsShownAndCountsDownBetweenPolls() {
        watcher.poll();
        assertThat(watcher.view().heldBackMillis()).isZero();

        heldBack = Duration.ofMillis(31_000); // the store restarted: it lists nothing and grants nothing
        advance(1_000);
        watcher.poll();
        advance(400);
        assertThat(watcher.view().heldBackMillis()).isEqualTo(30_600);
        advance(40_000);
        assertThat(watcher.view().heldBackMillis()).as("never below zero").isZero();
    }

    @Test
    void aStoreThatHoldsBackPerLockIsAskedOnceAndItsListingStillShown() {
        heldBackFailure = new UnsupportedOperationException("per hash slot");
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        advance(1_000);
        snapshot = List.of(held("a", "1@h#x", 5, 29_000L, 0), held("b", "2@h#y", 7, 30_000L, 0));
        watcher.poll();

        LockWatcher.View view = watcher.view();
        assertThat(view.heldBackMillis()).as("unknown, not zero").isNull();
        assertThat(view.error()).isNull();
        assertThat(view.locks()).extracting(LockWatcher.LockView::name).containsExactly("a", "b");
        assertThat(types()).containsExactly("grant b 7");
        assertThat(heldBackAsked).isEqualTo(1);
    }

    @Test
    void aFailedHoldBackQuestionIsAFailedPollThatKeepsTheLastView() {
        snapshot = List.of(held("a", "1@h#x", 5, 30_000L, 0));
        watcher.poll();
        heldBackFailure = new LockBackendException("the store timed out");
        snapshot = List.of();
        advance(1_000);
        watcher.poll();

        LockWatcher.View view = watcher.view();
        assertThat(view.error()).contains("the store timed out");
        assertThat(view.locks()).extracting(LockWatcher.LockView::name).containsExactly("a");
        assertThat(types()).as("no event derived from a failed poll").isEmpty();
    }
}
