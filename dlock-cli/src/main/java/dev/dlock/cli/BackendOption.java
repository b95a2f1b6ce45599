package dev.dlock.cli;

import dev.dlock.LockClient;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * The {@code --backend} and {@code --namespace} options shared by the commands that talk to a store, and the
 * rule that picks the store: {@code --backend}, then {@code $DLOCK_BACKEND}, then {@code backend=} in {@code
 * config.properties} of the config directory, else the local ZooKeeper server that {@link LocalServer}
 * starts on first use.
 *
 * <p>Failure modes: an unreadable config file is an {@link IllegalArgumentException} naming the file; a
 * local server that cannot be started is an {@link IllegalStateException} from {@link #resolve()}.
 */
final class BackendOption {
    static final String ENV_VARIABLE = "DLOCK_BACKEND";
    static final String CONFIG_FILE = "config.properties";

    @Option(
            names = "--backend",
            paramLabel = "URI",
            description = "Lock store, e.g. redis://localhost:6379, zookeeper://host:2181, "
                    + "jdbc:postgresql://host/db. Default: $DLOCK_BACKEND, then backend= in "
                    + "~/.config/dlock/config.properties, else the local server (dlock server).")
    String backend;

    @Option(
            names = "--namespace",
            paramLabel = "NS",
            defaultValue = "dlock",
            description = "Namespace separating applications in one store (default: ${DEFAULT-VALUE}).")
    String namespace;

    private final Environment env;

    BackendOption(Environment env) {
        this.env = env;
    }

    /** Where the store comes from, decided without connecting or starting anything. */
    record Choice(String uri, String source) {
        /** The local server is meant: it has no URI until it runs. */
        boolean embedded() {
            return uri == null;
        }
    }

    Choice choice() {
        if (backend != null && !backend.isBlank()) {
            return new Choice(backend.trim(), "--backend");
        }
        String fromEnv = env.variable(ENV_VARIABLE);
        if (fromEnv != null) {
            return new Choice(fromEnv.trim(), "$" + ENV_VARIABLE);
        }
        Path file = env.configDir().resolve(CONFIG_FILE);
        if (Files.isRegularFile(file)) {
            Properties config = new Properties();
            try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                config.load(reader);
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
            }
            String fromFile = config.getProperty("backend");
            if (fromFile != null && !fromFile.isBlank()) {
                return new Choice(fromFile.trim(), file.toString());
            }
        }
        return new Choice(null, "local server");
    }

    /** The store's URI, starting the local server if it is the one chosen and is not running. */
    String resolve() {
        Choice choice = choice();
        if (!choice.embedded()) {
            return choice.uri();
        }
        return LocalServer.in(env.stateDir()).ensureRunning().uri();
    }

    /** A client builder for the chosen store, with this option's namespace. */
    LockClient.Builder builder() {
        String uri = resolve();
        return LockClient.builder(uri).namespace(namespace);
    }
}
