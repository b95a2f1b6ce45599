package dev.dlock.chaos;

import dev.dlock.testsupport.EtcdServers;
import dev.dlock.testsupport.EtcdServers.Member;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A three-member etcd cluster ({@code EtcdServers} of dlock-test-support, as in the library's tests: each
 * member its own {@code etcd} process on free ports of the store address, heartbeat 50 ms, election
 * timeout 500 ms), so a lost leader is replaced within about a second.
 *
 * <p>Failure modes injected: one member killed (SIGKILL; restarted on its data), the leader killed, two
 * members killed (no quorum: no write and no lease renewal until they are back; etcd extends every lease
 * on the new leader's election, so leases outlive the outage), one member paused (SIGSTOP). Partitions
 * need nothing of the store: the members listen on the store address the client namespaces are cut from.
 * No clock fault: etcd is a Go binary that reads the clock through the vDSO, not the C library, so
 * libfaketime does not move it (and raft's timing is monotonic).
 *
 * <p>The binary is {@code /usr/bin/etcd} (Debian 12's etcd 3.4.23) unless {@code scripts/chaos.sh} was given
 * another in {@code DLOCK_ETCD_BINARY}. The clients' URI carries {@code allowStaleLeaderRevoke=true} only
 * when that binary's version has the stale leader's revocation (etcd-io/etcd#15247: before 3.4.31 and
 * 3.5.13), which the backend otherwise refuses; on a fixed version the clients run as an application
 * would, without the opt-out, and the backend's check has to accept the cluster.
 */
final class EtcdCluster implements Store {
    private static final Pattern COUNT = Pattern.compile("\"count\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+).*");

    private final EtcdServers servers;

    private EtcdCluster(EtcdServers servers) {
        this.servers = servers;
    }

    /** Starts the cluster on {@code host}; returns once it has a leader. */
    static EtcdCluster start(String host) {
        try {
            return new EtcdCluster(EtcdServers.cluster(host));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the etcd cluster did not start: " + e.getMessage(), e);
        }
    }

    @Override
    public String clientUri() {
        // An affected etcd (Debian 12's 3.4.23 by default) is refused as a cluster unless the URI accepts it:
        // its stalled leaders may revoke live leases (etcd-io/etcd#15247; docs/chaos.md counts what it does).
        // A fixed one (3.4.31, 3.5.13 or later) gets no opt-out.
        String uri = "etcd://" + servers.hosts();
        return revokesAfterStall(EtcdServers.version()) ? uri + "?allowStaleLeaderRevoke=true" : uri;
    }

    @Override
    public String serverVersion() {
        return EtcdServers.version();
    }

    /**
     * Whether an etcd version has the stale leader's revocation (etcd-io/etcd#15247): before 3.4.31 on the
     * 3.4 and earlier lines, before 3.5.13 on 3.5. A copy of {@code StaleLeaderCheck.revokesAfterStall} of
     * dlock-etcd, which is package-private there (and dlock-etcd is only a runtime dependency here): making
     * it public would add a version predicate to the library's API for the sake of this suite.
     * {@code EtcdVersionRuleTest} checks that both answer alike. A version it cannot read gets the opt-out
     * (the backend only warns about such a version).
     */
    static boolean revokesAfterStall(String version) {
        Matcher m = VERSION.matcher(version);
        if (!m.matches()) {
            return true;
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        int patch = Integer.parseInt(m.group(3));
        if (major != 3) {
            return major < 3;
        }
        return minor < 4 || (minor == 4 && patch < 31) || (minor == 5 && patch < 13);
    }

    @Override
    public long marginMillis() {
        return 10_000;
    }

    @Override
    public Set<Fault> faults() {
        return EnumSet.of(Fault.LEADER_KILL, Fault.QUORUM_LOSS, Fault.KILL_STORE, Fault.PAUSE_STORE);
    }

    @Override
    public Injection inject(Fault fault, Random random, long durationMillis) {
        List<Member> members = servers.members();
        Member any = members.get(random.nextInt(members.size()));
        return switch (fault) {
            case LEADER_KILL -> {
                Member leader = leaderNow();
                yield kill(List.of(leader != null ? leader : any));
            }
            case QUORUM_LOSS -> {
                List<Member> two = new ArrayList<>(members);
                two.remove(any);
                yield kill(two);
            }
            case KILL_STORE -> kill(List.of(any));
            case PAUSE_STORE -> {
                servers.freeze(any);
                yield new Injection("etcd " + any.name(), () -> servers.thaw(any));
            }
            default -> throw new IllegalArgumentException(fault.id());
        };
    }

    private Injection kill(List<Member> victims) {
        victims.forEach(servers::kill);
        String target = "etcd " + victims.stream().map(Member::name).collect(Collectors.joining(","));
        return new Injection(target, () -> victims.forEach(servers::start));
    }

    private Member leaderNow() {
        try {
            return servers.leaderNow();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Keys left in the cluster (every dlock key is on a client's etcd lease, so none should be). */
    @Override
    public long leftovers() {
        Member leader = leaderNow();
        // the whole key space: key and range_end "\0" (base64 AA==)
        String answer;
        try {
            answer = leader == null
                    ? null
                    : servers.post(
                            leader, "/v3/kv/range", "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"count_only\":true}");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (answer == null) {
            return -1;
        }
        Matcher count = COUNT.matcher(answer);
        return count.find() ? Long.parseLong(count.group(1)) : 0;
    }

    @Override
    public void close() {
        servers.close();
    }
}
