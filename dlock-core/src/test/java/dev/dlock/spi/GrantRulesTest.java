package dev.dlock.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The shared grant rules, case by case: each line is a state a store can be in when a request arrives. */
class GrantRulesTest {
    private static AcquireRequest request(Mode mode, String owner) {
        return request(mode, owner, 1, null);
    }

    private static AcquireRequest request(Mode mode, String owner, int permits, String downgradeFrom) {
        return new AcquireRequest(new LockKey("ns", "r", mode), owner, 1_000, permits, 1_000, downgradeFrom);
    }

    @Test
    void exclusiveAndWriteNeedNobodyHoldingButIgnoreTheQueue() {
        for (Mode mode : new Mode[] {Mode.EXCLUSIVE, Mode.WRITE}) {
            assertThat(GrantRules.mayGrant(request(mode, "a"), 0, null, null)).isTrue();
            assertThat(GrantRules.mayGrant(request(mode, "a"), 0, null, "b")).isTrue();
            assertThat(GrantRules.mayGrant(request(mode, "a"), 1, null, null)).isFalse();
            assertThat(GrantRules.mayGrant(request(mode, "a"), 1, "b", null)).isFalse();
        }
    }

    @Test
    void fairServesOnlyTheFirstInLine() {
        assertThat(GrantRules.mayGrant(request(Mode.FAIR, "a"), 0, null, null)).isTrue();
        assertThat(GrantRules.mayGrant(request(Mode.FAIR, "a"), 0, null, "a")).isTrue();
        assertThat(GrantRules.mayGrant(request(Mode.FAIR, "a"), 0, null, "b")).isFalse();
        assertThat(GrantRules.mayGrant(request(Mode.FAIR, "a"), 1, null, "a")).isFalse();
    }

    @Test
    void readersShareButAreKeptOutByAWriterHoldingOrWaiting() {
        assertThat(GrantRules.mayGrant(request(Mode.READ, "a"), 3, null, null)).isTrue();
        assertThat(GrantRules.mayGrant(request(Mode.READ, "a"), 1, "w", null)).isFalse();
        assertThat(GrantRules.mayGrant(request(Mode.READ, "a"), 2, null, "w")).isFalse();
    }

    @Test
    void aDowngradeIsGrantedPastItsOwnWriteHoldAndPastTheQueue() {
        assertThat(GrantRules.mayGrant(request(Mode.READ, "a", 1, "a"), 1, "a", "w"))
                .isTrue();
        assertThat(GrantRules.mayGrant(request(Mode.READ, "a", 1, "a"), 1, "other", null))
                .isFalse();
    }

    @Test
    void permitsAreCountedAgainstTheRequestsLimit() {
        assertThat(GrantRules.mayGrant(request(Mode.PERMIT, "a", 2, null), 1, null, "b"))
                .isTrue();
        assertThat(GrantRules.mayGrant(request(Mode.PERMIT, "a", 2, null), 2, null, null))
                .isFalse();
    }

    @Test
    void onlyFairAndWriteWaitersKeepAQueueEntry() {
        assertThat(Mode.FAIR.queuesWhileWaiting()).isTrue();
        assertThat(Mode.WRITE.queuesWhileWaiting()).isTrue();
        assertThat(Mode.EXCLUSIVE.queuesWhileWaiting()).isFalse();
        assertThat(Mode.READ.queuesWhileWaiting()).isFalse();
        assertThat(Mode.PERMIT.queuesWhileWaiting()).isFalse();
    }
}
