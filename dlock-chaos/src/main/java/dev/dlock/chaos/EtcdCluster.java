package dev.dlock.chaos;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A three-member etcd cluster, each member its own {@code etcd} process (Debian's {@code etcd-server}) on
 * free ports, with the raft timing the library's tests use (heartbeat 50 ms, election timeout 500 ms), so
 * a lost leader is replaced within about a second.
 *
 * <p>Failure modes injected: one member killed (SIGKILL; restarted on its data), the leader killed, two
 * members killed (no quorum: no write and no lease renewal until they are back; etcd extends every lease
 * on the new leader's election, so leases outlive the outage), one member paused (SIGSTOP). Partitions
 * need nothing of the store: the members listen on the store address the client namespaces are cut from.
 * No clock fault: etcd is a Go binary that reads the clock through the vDSO, not the C library, so
 * libfaketime does not move it (and raft's timing is monotonic).
 */
final class EtcdCluster implements Store {
    private static final String BINARY = "etcd";
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern COUNT = Pattern.compile("\"count\"\\s*:\\s*\"?(\\d+)");

    private final String host;
    private final Path dir;
    private final Path data;
    private final List<Member> members = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

    private EtcdCluster(String host, Path dir) throws IOException {
        this.host = host;
        this.dir = dir;
        // data on /dev/shm where there is one, as in the library's tests: fsync is cheap there
        Path shm = Path.of("/dev/shm");
        this.data = Files.createTempDirectory(
                Files.isDirectory(shm) && Files.isWritable(shm) ? shm : dir, "dlock-chaos-etcd-");
    }

    static EtcdCluster start(String host, Path dir, String classpath) {
        if (!Proc.available(BINARY, "--version")) {
            throw new IllegalStateException(
                    "no etcd binary on the PATH: install Debian's etcd-server package (scripts/test.sh does)");
        }
        EtcdCluster etcd;
        try {
            etcd = new EtcdCluster(host, dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            for (int i = 0; i < 3; i++) {
                etcd.members.add(new Member("m" + i, Proc.freePort(), Proc.freePort(), etcd.data.resolve("m" + i)));
            }
            for (Member m : etcd.members) {
                etcd.launch(m, "new");
            }
            Proc.await("the etcd cluster elected no leader", 60, () -> etcd.leader() != null);
            return etcd;
        } catch (RuntimeException e) {
            etcd.close();
            throw e;
        }
    }

    private String url(int port) {
        return "http://" + host + ":" + port;
    }

    private void launch(Member m, String state) {
        String cluster =
                members.stream().map(x -> x.name + "=" + url(x.peerPort)).collect(Collectors.joining(","));
        List<String> command = List.of(
                BINARY,
                "--name",
                m.name,
                "--data-dir",
                m.data.toString(),
                "--listen-client-urls",
                url(m.clientPort),
                "--advertise-client-urls",
                url(m.clientPort),
                "--listen-peer-urls",
                url(m.peerPort),
                "--initial-advertise-peer-urls",
                url(m.peerPort),
                "--initial-cluster",
                cluster,
                "--initial-cluster-state",
                state,
                "--initial-cluster-token",
                data.getFileName().toString(),
                "--heartbeat-interval",
                "50",
                "--election-timeout",
                "500");
        try {
            File log = dir.resolve(m.name + ".log").toFile();
            m.process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** POSTs a v3 gateway request to a member; null when it does not answer. */
    private String post(Member m, String path, String body) {
        try {
            HttpResponse<String> answer = http.send(
                    HttpRequest.newBuilder(URI.create(url(m.clientPort) + path))
                            .timeout(Duration.ofSeconds(2))
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() == 200 ? answer.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The member that says it is the leader, or null. */
    private Member leader() {
        for (Member m : members) {
            if (m.process == null || !m.process.isAlive()) {
                continue;
            }
            String status = post(m, "/v3/maintenance/status", "{}");
            if (status == null) {
                continue;
            }
            Matcher id = MEMBER_ID.matcher(status);
            Matcher leader = LEADER.matcher(status);
            if (id.find() && leader.find() && id.group(1).equals(leader.group(1))) {
                return m;
            }
        }
        return null;
    }

    @Override
    public String clientUri() {
        return "etcd://" + members.stream().map(m -> host + ":" + m.clientPort).collect(Collectors.joining(","));
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
        Member any = members.get(random.nextInt(members.size()));
        return switch (fault) {
            case LEADER_KILL -> {
                Member leader = leader();
                yield kill(List.of(leader != null ? leader : any));
            }
            case QUORUM_LOSS -> {
                List<Member> two = new ArrayList<>(members);
                two.remove(any);
                yield kill(two);
            }
            case KILL_STORE -> kill(List.of(any));
            case PAUSE_STORE -> {
                Proc.signalTree(any.process.pid(), "STOP");
                yield new Injection("etcd " + any.name, () -> Proc.signalTree(any.process.pid(), "CONT"));
            }
            default -> throw new IllegalArgumentException(fault.id());
        };
    }

    private Injection kill(List<Member> victims) {
        victims.forEach(m -> Proc.killTree(m.process));
        String target = "etcd " + victims.stream().map(m -> m.name).collect(Collectors.joining(","));
        return new Injection(target, () -> victims.forEach(m -> launch(m, "existing")));
    }

    /** Keys left in the cluster (every dlock key is on a client's etcd lease, so none should be). */
    @Override
    public long leftovers() {
        Member leader = leader();
        // the whole key space: key and range_end "\0" (base64 AA==)
        String answer = leader == null
                ? null
                : post(leader, "/v3/kv/range", "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"count_only\":true}");
        if (answer == null) {
            return -1;
        }
        Matcher count = COUNT.matcher(answer);
        return count.find() ? Long.parseLong(count.group(1)) : 0;
    }

    @Override
    public void close() {
        for (Member m : members) {
            Proc.killTree(m.process);
        }
        Proc.deleteTree(data);
    }

    private static final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path data;
        Process process;

        Member(String name, int clientPort, int peerPort, Path data) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.data = data;
        }
    }
}
