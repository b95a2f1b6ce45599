package dev.dlock.cli;

import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code dlock release --force NAME [--yes]}: an administrator removes every hold of a name. The holders find
 * out at their next renewal (a {@code dlock run} holder then stops its command and exits 75). Asks for
 * confirmation on standard input unless {@code --yes}.
 *
 * <p>Concurrency: one thread; between the question and the release the holder may change, and the release
 * removes whoever holds it then. Failure modes: end of input counts as no; a store failure exits 69.
 */
@Command(
        name = "release",
        description = {
            "Administrative: remove every hold of lock NAME, whoever holds it.",
            "Holders learn at their next renewal. Fencing tokens keep increasing."
        })
final class ReleaseCommand implements Plan, Main.Validated {
    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Option(names = "--force", required = true, description = "Required: says you mean to take the lock away.")
    boolean force;

    @Option(
            names = {"-y", "--yes"},
            description = "Do not ask for confirmation.")
    boolean yes;

    @Mixin
    BackendOption backend;

    private final Environment env;

    ReleaseCommand(Environment env) {
        this.env = env;
    }

    @Override
    public void validate(CommandLine self) {
        if (!force) {
            throw new ParameterException(self, "release takes a lock from its holder: say so with --force");
        }
    }

    @Override
    public int execute() {
        return Main.guarded(env, () -> {
            try (LockClient client = backend.builder().build()) {
                List<LockInfo> described = client.describe(name).stream()
                        .filter(info -> !info.holders().isEmpty() || info.waiters() > 0) // not only held back
                        .toList();
                if (described.isEmpty()) {
                    env.err().println("dlock: '" + name + "' is not held");
                    return ExitCodes.BUSY;
                }
                if (!yes && !confirmed(described)) {
                    env.err().println("dlock: not released");
                    return ExitCodes.BUSY;
                }
                boolean removed = client.forceRelease(name);
                env.out().println(removed ? "released '" + name + "'" : "'" + name + "' was not held any more");
                return removed ? ExitCodes.OK : ExitCodes.BUSY;
            }
        });
    }

    private boolean confirmed(List<LockInfo> described) throws IOException {
        String holder = Holders.exclusiveHolder(described).map(Holders::brief).orElse("waiters only");
        env.err().print("Force-release '" + name + "' held by " + holder + "? [y/N] ");
        env.err().flush();
        String answer = new BufferedReader(new InputStreamReader(env.in(), StandardCharsets.UTF_8)).readLine();
        return answer != null && List.of("y", "yes").contains(answer.trim().toLowerCase(Locale.ROOT));
    }
}
