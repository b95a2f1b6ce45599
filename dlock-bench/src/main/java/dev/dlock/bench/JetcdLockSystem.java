package dev.dlock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * jetcd's {@code Lock} client: etcd's server-side lock service ({@code v3lock}, what {@code etcdctl lock}
 * uses). {@code lock(name, lease)} blocks in the server until the caller's key (name + lease id) is the
 * oldest; {@code unlock(key)} deletes it. One jetcd {@code Client} per bench client. The key is made of
 * the lease id, so two threads sharing a lease would share the lock: each thread's handle has its own
 * lease (TTL 30 s, dlock's default lease time), kept alive by jetcd's keep-alive stream.
 *
 * <p>There is no try-lock, so it takes part in the {@code uncontended} and {@code contended} scenarios.
 */
final class JetcdLockSystem implements LockSystem {
    static final String PREFIX = "dlock-bench-jetcd/";
    private static final long LEASE_SECONDS = 30;

    @Override
    public String name() {
        return "jetcd-lock";
    }

    @Override
    public String backend() {
        return "etcd";
    }

    @Override
    public boolean supports(Scenario scenario) {
        return scenario == Scenario.UNCONTENDED || scenario == Scenario.CONTENDED;
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        return endpoints.etcd() == null ? "no etcd server" : Probes.tcp(endpoints.etcd());
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) {
        io.etcd.jetcd.Client etcd = io.etcd.jetcd.Client.builder()
                .endpoints("http://" + endpoints.etcd())
                .build();
        List<CloseableClient> keepAlives = new CopyOnWriteArrayList<>();
        return new Client() {
            @Override
            public BenchLock lock(String name) throws Exception {
                long lease = etcd.getLeaseClient()
                        .grant(LEASE_SECONDS)
                        .get(10, TimeUnit.SECONDS)
                        .getID();
                keepAlives.add(etcd.getLeaseClient().keepAlive(lease, new Ignore()));
                ByteSequence key = ByteSequence.from(PREFIX + name, StandardCharsets.UTF_8);
                return new BenchLock() {
                    private ByteSequence held;

                    @Override
                    public void lock() throws Exception {
                        held = etcd.getLockClient().lock(key, lease).get().getKey();
                    }

                    @Override
                    public void unlock() throws Exception {
                        etcd.getLockClient().unlock(held).get();
                        held = null;
                    }

                    @Override
                    public boolean tryLock() {
                        throw new UnsupportedOperationException("jetcd's Lock service has no try-lock");
                    }
                };
            }

            @Override
            public void close() {
                keepAlives.forEach(CloseableClient::close);
                etcd.close();
            }
        };
    }

    /** jetcd's keep-alive stream wants an observer; the bench does not look at the answers. */
    private static final class Ignore implements StreamObserver<LeaseKeepAliveResponse> {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}
