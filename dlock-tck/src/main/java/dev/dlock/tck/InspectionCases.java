package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Inspection and administration: {@code heldLeases}, {@code describe}, {@code list}, and a {@code
 * forceRelease} whose old holder's late release never frees the next holder.
 */
abstract class InspectionCases extends ContractSection {
    InspectionCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void heldLeasesListsWhatThisClientHolds() {
        LockClient a = client();
        try (Lease x = a.lock("held-1").acquire(LONG_WAIT);
                Lease y = (offersFairLocks()
                                ? a.fairLock("held-2")
                                : a.readWriteLock("held-2").readLock())
                        .acquire(LONG_WAIT)) {
            assertThat(a.heldLeases()).extracting(Lease::name).containsExactlyInAnyOrder("held-1", "held-2");
            assertThat(x.isValid() && y.isValid()).isTrue();
        }
        assertThat(a.heldLeases()).isEmpty();
    }

    @Test
    void describeAndListShowHoldersAndTokens() {
        LockClient a = client();
        try (Lease lease = a.lock("described").acquire(LONG_WAIT)) {
            List<LockInfo> infos = client().describe("described");
            assertThat(infos).hasSize(1);
            LockInfo info = infos.get(0);
            assertThat(info.name()).isEqualTo("described");
            assertThat(info.holders()).hasSize(1);
            assertThat(info.holders().get(0).fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(client().list("descr")).extracting(LockInfo::name).contains("described");
            assertThat(client().list("zzz")).isEmpty();
        }
        assertThat(client().describe("described")).isEmpty();
    }

    @Test
    void aForceReleasedHoldersReleaseNeverRemovesTheNextHolder() throws Exception {
        for (String name : offersFairLocks() ? List.of("fr-x", "fr-fair") : List.of("fr-x")) {
            boolean fair = name.equals("fr-fair");
            LockClient old = client();
            Lease stale = (fair ? old.fairLock(name) : old.lock(name)).acquire(LONG_WAIT);
            LockClient admin = client();
            assertThat(admin.forceRelease(name)).isTrue();
            LockClient next = client();
            Lease current = (fair ? next.fairLock(name) : next.lock(name)).acquire(LONG_WAIT);
            stale.close(); // the old holder gives up what it believes it still holds
            assertThat(current.isValid()).isTrue();
            assertThat((fair ? admin.fairLock(name) : admin.lock(name)).tryAcquire())
                    .as("the new holder of '%s' still holds after the old holder's release", name)
                    .isEmpty();
            assertThat(admin.describe(name))
                    .flatExtracting(LockInfo::holders)
                    .extracting(LockInfo.Holder::fencingToken)
                    .containsExactly(current.fencingToken());
            current.close();
        }
    }
}
