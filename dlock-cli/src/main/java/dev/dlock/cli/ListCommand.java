package dev.dlock.cli;

import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code dlock ls [PREFIX]}: a table of held locks: name, kind, holder, mode, token, expiry, waiters.
 *
 * <p>Concurrency: one thread; the list is a snapshot, stale at once. Failure modes: a store failure exits
 * 69 (see {@link Main#guarded}).
 */
@Command(name = "ls", description = "List held locks whose names start with PREFIX (default: all).")
final class ListCommand implements Plan {
    @Parameters(index = "0", arity = "0..1", paramLabel = "PREFIX", description = "Name prefix.")
    String prefix = "";

    @Mixin
    BackendOption backend;

    private final Environment env;

    ListCommand(Environment env) {
        this.env = env;
    }

    @Override
    public int execute() {
        return Main.guarded(env, () -> {
            try (LockClient client = backend.builder().build()) {
                List<String[]> rows = new ArrayList<>();
                rows.add(new String[] {"NAME", "KIND", "HOLDER", "MODE", "TOKEN", "EXPIRES", "WAITERS"});
                for (LockInfo info : client.list(prefix)) {
                    if (info.holders().isEmpty()) {
                        rows.add(new String[] {info.name(), info.kind().tag(), "-", "-", "-", "-", Holders.waiters(info)
                        });
                    }
                    for (LockInfo.Holder holder : info.holders()) {
                        rows.add(new String[] {
                            info.name(),
                            info.kind().tag(),
                            Holders.process(holder.owner()),
                            holder.mode(),
                            Long.toString(holder.fencingToken()),
                            Holders.expiry(holder),
                            Holders.waiters(info)
                        });
                    }
                }
                if (rows.size() == 1) {
                    env.out().println("no locks held" + (prefix.isEmpty() ? "" : " under '" + prefix + "'"));
                } else {
                    Table.print(env.out(), rows, 4);
                }
                return ExitCodes.OK;
            }
        });
    }
}
