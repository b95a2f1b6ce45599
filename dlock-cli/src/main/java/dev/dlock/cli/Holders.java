package dev.dlock.cli;

import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import java.util.List;
import java.util.Optional;

/**
 * Text for lock holders as {@code status}, {@code ls} and the live status line of {@code run} show them.
 *
 * <p>Concurrency: stateless. Failure modes: none; unknown values print as {@code ?} or {@code -}.
 */
final class Holders {
    private Holders() {}

    /** The process part of an owner id: {@code pid@host}, the part before {@code #}. */
    static String process(String owner) {
        int hash = owner.indexOf('#');
        return hash < 0 ? owner : owner.substring(0, hash);
    }

    /** The exclusive ({@code lock}) holder among described kinds, else the first holder of any kind. */
    static Optional<LockInfo.Holder> exclusiveHolder(List<LockInfo> described) {
        return described.stream()
                .filter(info -> info.kind() == LockKind.LOCK)
                .flatMap(info -> info.holders().stream())
                .findFirst()
                .or(() -> described.stream()
                        .flatMap(info -> info.holders().stream())
                        .findFirst());
    }

    /** {@code 1234@host (token 17)}. */
    static String brief(LockInfo.Holder holder) {
        return process(holder.owner()) + " (token " + holder.fencingToken() + ")";
    }

    /**
     * {@code 28.1s}; {@code session} where the store gives no lease time because the lease is the holder's
     * session (ZooKeeper: held while the holder's session lives, gone within the session timeout after the
     * holder stops answering).
     */
    static String expiry(LockInfo.Holder holder) {
        return holder.expiresIn() == null ? "session" : Durations.format(holder.expiresIn());
    }

    /** The waiter count, or {@code -} where the store keeps no queue. */
    static String waiters(LockInfo info) {
        return info.waiters() < 0 ? "-" : Integer.toString(info.waiters());
    }
}
