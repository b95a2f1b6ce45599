package dev.dlock.etcd;

import dev.dlock.LockBackendException;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.cluster.Member;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Refuses an etcd cluster whose members may revoke a lease the cluster still keeps alive. Before etcd
 * 3.4.31 and 3.5.13 (etcd-io/etcd#15247, fixed by #17465 and #17425), a leader that stalls (a long pause, a
 * slow disk, a stopped process) and resumes still acts as the primary of every lease for a moment: it
 * revokes the leases whose keep-alives went to the new leader meanwhile, as expired by its own stale view,
 * and the revocation is committed. Their keys vanish and another client is granted the lock while the
 * holder's lease is valid by every answer it had, so the holder cannot be told first. Seen here on Debian
 * 12's etcd 3.4.23: 5 of 36 leader pauses of 2.5-4 s with a 2 s lease revoked a lease renewed on the new
 * leader 0.1-0.4 s before, within 0.5 s of the resume; none of 8 follower pauses did.
 *
 * <p>A single member has no other leader and is not checked. Checked once per backend at open: the member
 * list, then each voting member's version, all within the operation timeout. A member whose version cannot
 * be read (down, or a channel jetcd cannot open to it) is logged as a warning and accepted, as is a version
 * this class cannot parse. With the opt-out ({@code allowStaleLeaderRevoke=true}) an affected cluster is
 * logged as a warning instead of refused.
 *
 * <p>Concurrency: stateless. Failure modes: waits at most the operation timeout in all.
 */
final class StaleLeaderCheck {
    private static final System.Logger LOG = System.getLogger(StaleLeaderCheck.class.getName());
    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+).*");

    private StaleLeaderCheck() {}

    /**
     * Checks the members of the cluster {@code client} talks to.
     *
     * @param allow whether an affected cluster is accepted with a warning rather than refused
     * @throws Affected if a member runs an affected version and {@code allow} is false
     */
    static void verify(Client client, Duration timeout, boolean allow) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Member> members;
        try {
            members = await(client.getClusterClient().listMember(), deadline).getMembers();
        } catch (ExecutionException | TimeoutException e) {
            warnUnchecked("the member list", e);
            return;
        }
        List<Member> voters = members.stream().filter(m -> !m.isLearner()).toList();
        if (voters.size() < 2) {
            return;
        }
        Map<String, CompletableFuture<StatusResponse>> asked = new LinkedHashMap<>();
        for (Member member : voters) {
            if (!member.getClientURIs().isEmpty()) {
                URI uri = member.getClientURIs().get(0);
                asked.put(describe(member, uri), client.getMaintenanceClient().statusMember(target(uri)));
            }
        }
        List<String> affected = new ArrayList<>();
        for (var answer : asked.entrySet()) {
            String version;
            try {
                version = await(answer.getValue(), deadline).getVersion();
            } catch (ExecutionException | TimeoutException e) {
                answer.getValue().cancel(false);
                warnUnchecked("the version of member " + answer.getKey(), e);
                continue;
            }
            Boolean revokes = revokesAfterStall(version);
            if (revokes == null) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "dlock: cannot tell etcd version ''{0}'' of member {1}; make sure it is 3.4.31, 3.5.13 or"
                                + " later (etcd-io/etcd#15247)",
                        version,
                        answer.getKey());
            } else if (revokes) {
                affected.add(answer.getKey() + " runs " + version);
            }
        }
        if (affected.isEmpty()) {
            return;
        }
        String what = "etcd member " + String.join(", ", affected)
                + ": before 3.4.31 and 3.5.13 a leader that stalls and resumes may revoke leases the cluster"
                + " still keeps alive (etcd-io/etcd#15247), and another client is then granted a lock whose"
                + " holder cannot be told first";
        if (allow) {
            LOG.log(System.Logger.Level.WARNING, "dlock: " + what + " (accepted: allowStaleLeaderRevoke=true)");
            return;
        }
        throw new Affected(what + ". Upgrade etcd to 3.4.31, 3.5.13 or later, or accept the risk explicitly with"
                + " the URI option allowStaleLeaderRevoke=true (EtcdBackends.allowingStaleLeaderRevoke(client))");
    }

    /**
     * Whether a version has the stale leader's revocation: before 3.4.31 on 3.4 and earlier lines, before
     * 3.5.13 on 3.5; null if the version cannot be read.
     */
    static Boolean revokesAfterStall(String version) {
        Matcher m = version == null ? null : VERSION.matcher(version);
        if (m == null || !m.matches()) {
            return null;
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        int patch = Integer.parseInt(m.group(3));
        if (major != 3) {
            return major < 3;
        }
        return minor < 4 || (minor == 4 && patch < 31) || (minor == 5 && patch < 13);
    }

    /** jetcd opens a channel of its own to the member: a gRPC target, {@code host:port}. */
    private static String target(URI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    private static String describe(Member member, URI uri) {
        return (member.getName().isEmpty() ? Long.toHexString(member.getId()) : member.getName()) + " (" + uri.getHost()
                + ":" + uri.getPort() + ")";
    }

    private static <T> T await(CompletableFuture<T> answer, long deadline) throws ExecutionException, TimeoutException {
        try {
            return answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while checking the etcd members' versions", e);
        }
    }

    private static void warnUnchecked(String what, Exception e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        LOG.log(
                System.Logger.Level.WARNING,
                "dlock: cannot read {0} of etcd ({1}); make sure every member runs 3.4.31, 3.5.13 or later, or a"
                        + " leader that stalls may revoke live leases (etcd-io/etcd#15247)",
                what,
                cause.toString());
    }

    /** The refusal of a cluster whose members may revoke live leases. */
    static final class Affected extends LockBackendException {
        private static final long serialVersionUID = 1L;

        Affected(String message) {
            super(message);
        }
    }
}
