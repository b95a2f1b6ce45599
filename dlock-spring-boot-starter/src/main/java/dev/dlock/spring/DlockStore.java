package dev.dlock.spring;

import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendFactory;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The lock store the application's {@link LockClient} talks to, chosen once at startup, with a
 * description fit for messages.
 *
 * <p>Choice, first match wins: {@code dlock.uri}; the one {@link LockBackendFactory} bean; the one {@link
 * BackendCandidate} (or the one {@code dlock.backend} names). Anything else is a configuration error that
 * says what to set.
 *
 * <p>Failure modes: {@link #connect} turns a store that cannot be reached into a {@link
 * LockBackendException} whose message names the store (passwords masked), so that the application's
 * start fails with that message instead of at the first lock.
 */
final class DlockStore {
    static final String PROBE_NAME = "dlock-startup-check";

    private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/@:?#]*:)[^@/?#]*@");
    private static final Pattern QUERY_PASSWORD =
            Pattern.compile("([?&;](?i:password|pass|pwd|secret)=)[^&;#]*", Pattern.CASE_INSENSITIVE);

    private final String description;
    private final String uri;
    private final LockBackendFactory factory;

    private DlockStore(String description, String uri, LockBackendFactory factory) {
        this.description = description;
        this.uri = uri;
        this.factory = factory;
    }

    static DlockStore choose(
            DlockProperties properties,
            Map<String, LockBackendFactory> factories,
            Supplier<List<BackendCandidate>> offered) {
        String uri = properties.getUri();
        if (uri != null && !uri.isBlank()) {
            return new DlockStore(mask(uri.strip()), uri.strip(), null);
        }
        if (factories.size() == 1) {
            Map.Entry<String, LockBackendFactory> only =
                    factories.entrySet().iterator().next();
            return new DlockStore("LockBackendFactory bean '" + only.getKey() + "'", null, only.getValue());
        }
        if (factories.size() > 1) {
            throw new IllegalStateException("dlock: several LockBackendFactory beans exist " + factories.keySet()
                    + "; keep one, or set dlock.uri");
        }
        String wanted = properties.getBackend();
        List<BackendCandidate> candidates = offered.get().stream()
                .sorted(Comparator.comparing(BackendCandidate::kind))
                .toList();
        List<BackendCandidate> eligible = candidates.stream()
                .filter(c -> wanted == null || wanted.isBlank() || c.kind().equalsIgnoreCase(wanted.strip()))
                .toList();
        if (eligible.size() == 1) {
            BackendCandidate only = eligible.get(0);
            return new DlockStore(only.description(), null, only.factory());
        }
        if (eligible.size() > 1) {
            throw new IllegalStateException("dlock: several lock stores qualify (" + describe(eligible)
                    + "); choose one with dlock.backend="
                    + eligible.stream().map(BackendCandidate::kind).collect(Collectors.joining("|"))
                    + " or set dlock.uri");
        }
        if (wanted != null && !wanted.isBlank()) {
            throw new IllegalStateException("dlock.backend=" + wanted + " but no such store client qualifies"
                    + (candidates.isEmpty() ? "" : " (found: " + describe(candidates) + ")")
                    + "; the backend needs its dlock module on the class path and the application's client bean"
                    + " (redis: dlock-redis and a LettuceConnectionFactory; jdbc: dlock-jdbc and a DataSource;"
                    + " zookeeper: dlock-zookeeper and a CuratorFramework)");
        }
        throw new IllegalStateException("dlock: no lock store is configured. Set dlock.uri (for example"
                + " redis://localhost:6379, jdbc:postgresql://localhost:5432/app, or mem: for one JVM), define a"
                + " LockBackendFactory bean, or put a dlock backend module (dlock-redis, dlock-jdbc,"
                + " dlock-zookeeper) next to the application's Redis connection factory, DataSource or"
                + " CuratorFramework");
    }

    private static String describe(List<BackendCandidate> candidates) {
        return candidates.stream().map(c -> c.kind() + ": " + c.description()).collect(Collectors.joining(", "));
    }

    /** Hides passwords in a URI: the user-info password and {@code password=} query parameters. */
    static String mask(String uri) {
        String masked = USER_INFO_PASSWORD.matcher(uri).replaceAll("$1****@");
        return QUERY_PASSWORD.matcher(masked).replaceAll("$1****");
    }

    /**
     * What the store is, without secrets.
     *
     * @return for example {@code redis://:****@cache:6379} or {@code LockBackendFactory bean 'locks'}
     */
    String description() {
        return description;
    }

    LockClient.Builder builder() {
        return uri != null ? LockClient.builder(uri) : LockClient.builder(factory);
    }

    /**
     * Builds the client and, when asked, checks that the store answers.
     *
     * @throws LockBackendException naming the store when it cannot be reached
     * @throws IllegalArgumentException when no backend accepts the URI or an option is invalid
     */
    LockClient connect(LockClient.Builder builder, boolean check) {
        LockClient client;
        try {
            client = builder.build();
        } catch (LockBackendException e) {
            throw new LockBackendException(
                    "dlock could not open the lock store at " + description + ": " + mask(e.getMessage()), e);
        } catch (IllegalArgumentException e) {
            // A backend's message may quote the URI as given: mask it, and leave the original out of the chain.
            String reason = mask(String.valueOf(e.getMessage()));
            if (uri != null) {
                throw new DlockUriFailureAnalyzer.InvalidUriException(description, reason);
            }
            throw new IllegalArgumentException("dlock: " + reason);
        }
        if (check) {
            try {
                client.describe(PROBE_NAME);
            } catch (RuntimeException e) {
                client.close();
                throw new LockBackendException(
                        "dlock startup check failed: the lock store at " + description + " did not answer: "
                                + mask(String.valueOf(e.getMessage())),
                        e);
            }
        }
        return client;
    }
}
