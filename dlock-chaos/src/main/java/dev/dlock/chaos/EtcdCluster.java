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
 */
final class EtcdCluster implements Store {
    private static final Pattern COUNT = Pattern.compile("\"count\"\\s*:\\s*\"?(\\d+)");

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
        // The suite runs Debian 12's etcd 3.4.23, which the backend refuses as a cluster unless told to accept
        // it: its stalled leaders may revoke live leases (etcd-io/etcd#15247; docs/chaos.md counts what it does).
        return "etcd://" + servers.hosts() + "?allowStaleLeaderRevoke=true";
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
