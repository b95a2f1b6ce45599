package dev.dlock.cli;

import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code dlock status NAME}: who holds a lock, with which token, until when, and whether the store holds
 * grants back after it may have lost state; exits 0 if held, 1 if free.
 *
 * <p>Concurrency: one thread; the answer is a snapshot. Failure modes: a store failure exits 69.
 */
@Command(
        name = "status",
        description = "Show who holds lock NAME (every kind: lock, fair, rw, sem). Exits 0 if held, 1 if free.")
final class StatusCommand implements Plan {
    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Mixin
    BackendOption backend;

    private final Environment env;

    StatusCommand(Environment env) {
        this.env = env;
    }

    @Override
    public int execute() {
        return Main.guarded(env, () -> {
            try (LockClient client = backend.builder().build()) {
                List<LockInfo> described = client.describe(name);
                boolean taken = false;
                for (LockInfo info : described) {
                    if (info.holders().isEmpty() && info.waiters() <= 0) {
                        continue; // only held back
                    }
                    taken = true;
                    env.out().println(name + ": " + info.kind().tag() + ", waiters " + Holders.waiters(info));
                    for (LockInfo.Holder holder : info.holders()) {
                        env.out()
                                .println("  holder " + Holders.process(holder.owner()) + "  token "
                                        + holder.fencingToken() + "  mode " + holder.mode() + "  expires in "
                                        + Holders.expiry(holder) + "  owner " + holder.owner());
                    }
                }
                if (!taken) {
                    env.out().println(name + ": free");
                }
                described.stream()
                        .map(LockInfo::heldBack)
                        .max(Duration::compareTo)
                        .filter(left -> !left.isZero())
                        .ifPresent(left -> env.out()
                                .println("  grants held back for " + Durations.format(left)
                                        + ": the store may have lost holds whose leases are still running"));
                return taken ? ExitCodes.OK : ExitCodes.BUSY;
            }
        });
    }
}
