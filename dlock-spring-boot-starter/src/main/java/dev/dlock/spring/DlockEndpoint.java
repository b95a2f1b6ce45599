package dev.dlock.spring;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code dlock} actuator endpoint. {@code GET /actuator/dlock} lists the leases this instance holds
 * now; {@code GET /actuator/dlock/{name}} asks the store who holds a lock name, in any instance. Durations
 * are ISO-8601 ({@code PT2.5S}). Expose it with {@code management.endpoints.web.exposure.include=dlock}.
 */
@Endpoint(id = "dlock")
public class DlockEndpoint {
    private final LockClient client;

    /**
     * Creates the endpoint.
     *
     * @param client the client whose leases are listed
     */
    public DlockEndpoint(LockClient client) {
        this.client = client;
    }

    /**
     * The leases this instance holds now, sorted by name.
     *
     * @return the report
     */
    @ReadOperation
    public HeldLeases leases() {
        List<HeldLease> leases = client.heldLeases().stream()
                .map(DlockEndpoint::view)
                .sorted(Comparator.comparing(HeldLease::name).thenComparing(HeldLease::token))
                .toList();
        return new HeldLeases(leases.size(), leases);
    }

    private static HeldLease view(Lease lease) {
        return new HeldLease(
                lease.name(),
                lease.fencingToken(),
                lease.heldFor().toString(),
                lease.remaining().toString());
    }

    /**
     * What the store knows about one lock name, in every kind of lock that has holders or waiters, or whose
     * grants the store holds back.
     *
     * @param name the lock name
     * @return one entry per kind, empty when nobody holds the name and nothing is held back
     */
    @ReadOperation
    public List<StoreLock> lock(@Selector String name) {
        return client.describe(name).stream().map(DlockEndpoint::view).toList();
    }

    private static StoreLock view(LockInfo info) {
        return new StoreLock(
                info.name(),
                info.kind().tag(),
                info.waiters(),
                info.holders().stream()
                        .map(h -> new Holder(h.owner(), h.fencingToken(), h.mode(), iso(h.expiresIn())))
                        .toList(),
                iso(info.heldBack()));
    }

    private static String iso(Duration duration) {
        return duration == null ? null : duration.toString();
    }

    /**
     * This instance's leases.
     *
     * @param count how many
     * @param leases the leases
     */
    public record HeldLeases(int count, List<HeldLease> leases) {}

    /**
     * One held lease.
     *
     * @param name the lock name
     * @param token the fencing token of the grant
     * @param heldFor how long it has been held, ISO-8601
     * @param expiresIn time left before its local deadline unless renewed, ISO-8601
     */
    public record HeldLease(String name, long token, String heldFor, String expiresIn) {}

    /**
     * A lock as the store sees it.
     *
     * @param name the lock name
     * @param kind {@code lock}, {@code fair}, {@code rw} or {@code sem}
     * @param waiters callers queued in the store, or -1 where the store keeps no queue
     * @param holders the holders
     * @param heldBack how long the store holds grants of it back after it may have lost state, ISO-8601;
     *     {@code PT0S} when it grants
     */
    public record StoreLock(String name, String kind, int waiters, List<Holder> holders, String heldBack) {}

    /**
     * One holder of a lock, in any instance.
     *
     * @param owner the owner id; its part before {@code #} names the process ({@code pid@host})
     * @param token the fencing token of the holder's grant
     * @param mode {@code exclusive}, {@code fair}, {@code read}, {@code write} or {@code permit}
     * @param expiresIn time left on the holder's lease by the store's clock, ISO-8601, or null when unknown
     */
    public record Holder(String owner, long token, String mode, String expiresIn) {}
}
