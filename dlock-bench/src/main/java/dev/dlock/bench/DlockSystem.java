package dev.dlock.bench;

import dev.dlock.DistributedLock;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import java.util.ServiceLoader;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

/**
 * dlock on one backend, reached through {@code LockClient.builder(uri)} with default options (30 s
 * leases renewed in the background, the thread-owned {@code Lock} view).
 *
 * <p>A backend whose module is not on the class path is reported unavailable rather than failing the
 * run, so the bench builds and runs while backend modules are still being written.
 *
 * <p>Concurrency: a {@link LockClient} is shared by the threads of one bench client; lock views are
 * cheap and created per thread.
 */
final class DlockSystem implements LockSystem {
    static final String NAMESPACE = "dlock-bench";

    private final String backend;
    private final BiFunction<Endpoints, Integer, String> uri;
    private final UnaryOperator<LockBackend> decorator;

    DlockSystem(String backend, BiFunction<Endpoints, Integer, String> uri) {
        this(backend, uri, UnaryOperator.identity());
    }

    private DlockSystem(
            String backend, BiFunction<Endpoints, Integer, String> uri, UnaryOperator<LockBackend> decorator) {
        this.backend = backend;
        this.uri = uri;
        this.decorator = decorator;
    }

    /** The same system with every client's backend wrapped, e.g. to count store calls. */
    DlockSystem decorated(UnaryOperator<LockBackend> wrap) {
        return new DlockSystem(backend, uri, wrap);
    }

    @Override
    public String name() {
        return "dlock";
    }

    @Override
    public String backend() {
        return backend;
    }

    /**
     * Redlock is not in the held scenario: its counting proxy stands in front of one server. Nor is etcd:
     * the proxy has no framer for gRPC (HTTP/2) frames; etcd's renewal cost is one keep-alive per tick,
     * tested in dlock-etcd ({@code EtcdBackendTest}).
     */
    @Override
    public boolean supports(Scenario scenario) {
        return scenario != Scenario.HELD || !(backend.equals("redlock") || backend.equals("etcd"));
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        if (backend.equals("redlock") && endpoints.redlock() == null) {
            return "no Redlock masters";
        }
        String target = uri.apply(endpoints, 1);
        for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
            if (provider.accepts(target)) {
                try (LockClient client =
                        LockClient.builder(target).namespace(NAMESPACE).build()) {
                    client.list("");
                    return null;
                } catch (RuntimeException e) {
                    return "dlock cannot use " + target + ": " + e.getMessage();
                }
            }
        }
        return "no dlock backend module for " + target + " is on the class path";
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) {
        LockClient.Builder builder =
                LockClient.builder(uri.apply(endpoints, threads)).namespace(NAMESPACE);
        LockClient client =
                builder.backend(builder.backend().andThen(decorator)).build();
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                DistributedLock lock = client.lock(name);
                return BenchLock.of(lock);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
