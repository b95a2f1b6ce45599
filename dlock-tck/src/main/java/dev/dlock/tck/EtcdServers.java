package dev.dlock.tck;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * etcd servers for tests: {@code /usr/bin/etcd} processes (Debian's {@code etcd-server}, which {@code
 * scripts/test.sh} installs) on free loopback ports with temporary data directories (on {@code /dev/shm}
 * when there is one, so that fsync is cheap). One member, or a cluster of three whose members can be
 * killed and restarted with their data. The system property {@code dlock.etcd.binary} names another
 * binary.
 *
 * <p>Raft timing is shortened (heartbeat 50 ms, election 500 ms) so that a killed leader is replaced
 * within about a second.
 *
 * <pre>{@code
 * try (EtcdServers cluster = EtcdServers.cluster()) {
 *     LockClient client = LockClient.connect("etcd://" + cluster.hosts());
 *     cluster.kill(cluster.leader());
 * }
 * }</pre>
 */
public final class EtcdServers implements AutoCloseable {
    private static final String BINARY = System.getProperty("dlock.etcd.binary", "/usr/bin/etcd");
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"?(\\d+)");

    private final Path root;
    private final List<Member> members = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final Thread cleanup;

    /** One etcd process. */
    public final class Member {
        private final String name;
        private final int clientPort;
        private final int peerPort;
        private final Path dataDir;
        private Process process;

        Member(String name, int clientPort, int peerPort) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.dataDir = root.resolve(name);
        }

        String peerUrl() {
            return "http://127.0.0.1:" + peerPort;
        }

        /**
         * The member's name in the cluster.
         *
         * @return {@code m0}, {@code m1}, ...
         */
        public String name() {
            return name;
        }

        /**
         * The loopback port clients connect to.
         *
         * @return the client port
         */
        public int clientPort() {
            return clientPort;
        }

        /**
         * The member's client URL, for a jetcd client.
         *
         * @return {@code http://127.0.0.1:port}
         */
        public String clientUrl() {
            return "http://127.0.0.1:" + clientPort;
        }

        /**
         * Whether the member's process runs.
         *
         * @return true between start and kill
         */
        public boolean alive() {
            return process != null && process.isAlive();
        }

        @Override
        public String toString() {
            return "etcd " + name + " at " + clientUrl();
        }
    }

    private EtcdServers(int size) throws IOException {
        if (!new File(BINARY).canExecute()) {
            throw new IllegalStateException("no etcd server at " + BINARY
                    + ": install Debian's etcd-server package (apt-get install etcd-server), as scripts/test.sh does");
        }
        Path shm = Path.of("/dev/shm");
        root = Files.isDirectory(shm) && Files.isWritable(shm)
                ? Files.createTempDirectory(shm, "dlock-etcd-")
                : Files.createTempDirectory("dlock-etcd-");
        for (int i = 0; i < size; i++) {
            members.add(new Member("m" + i, freePort(), freePort()));
        }
        cleanup = new Thread(this::destroy, "etcd-servers-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /**
     * One etcd member, started and answering.
     *
     * @return the running server
     * @throws Exception if it could not be started (the message says how to install etcd)
     */
    public static EtcdServers single() throws Exception {
        return started(1);
    }

    /**
     * Three members in one cluster, started and with a leader.
     *
     * @return the running cluster
     * @throws Exception if it could not be started
     */
    public static EtcdServers cluster() throws Exception {
        return started(3);
    }

    private static EtcdServers started(int size) throws Exception {
        EtcdServers servers = new EtcdServers(size);
        try {
            for (Member m : servers.members) {
                servers.launch(m, "new");
            }
            for (Member m : servers.members) {
                servers.awaitHealthy(m);
            }
            return servers;
        } catch (Exception | Error e) {
            servers.close();
            throw e;
        }
    }

    /**
     * The members, in start order.
     *
     * @return every member
     */
    public List<Member> members() {
        return members;
    }

    /**
     * One member.
     *
     * @param i its index
     * @return the member
     */
    public Member member(int i) {
        return members.get(i);
    }

    /**
     * {@code host:port,...} of every member, for an {@code etcd://} URI.
     *
     * @return the members' client addresses
     */
    public String hosts() {
        return members.stream().map(m -> "127.0.0.1:" + m.clientPort).collect(Collectors.joining(","));
    }

    private void launch(Member m, String state) throws IOException {
        String cluster = members.stream().map(x -> x.name + "=" + x.peerUrl()).collect(Collectors.joining(","));
        List<String> command = List.of(
                BINARY,
                "--name",
                m.name,
                "--data-dir",
                m.dataDir.toString(),
                "--listen-client-urls",
                m.clientUrl(),
                "--advertise-client-urls",
                m.clientUrl(),
                "--listen-peer-urls",
                m.peerUrl(),
                "--initial-advertise-peer-urls",
                m.peerUrl(),
                "--initial-cluster",
                cluster,
                "--initial-cluster-state",
                state,
                "--initial-cluster-token",
                root.getFileName().toString(),
                "--heartbeat-interval",
                "50",
                "--election-timeout",
                "500");
        File log = root.resolve(m.name + ".log").toFile();
        m.process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log))
                .start();
    }

    private void awaitHealthy(Member m) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!m.alive()) {
                throw new IllegalStateException("etcd " + m.name + " exited; log: " + root.resolve(m.name + ".log"));
            }
            try {
                HttpResponse<String> answer = http.send(
                        HttpRequest.newBuilder(URI.create(m.clientUrl() + "/health"))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 200 && answer.body().contains("\"true\"")) {
                    return;
                }
            } catch (IOException e) {
                // not up yet
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("etcd " + m.name + " not healthy within 30 s");
            }
            Thread.sleep(50);
        }
    }

    /**
     * Kills a member at once (SIGKILL), keeping its data.
     *
     * @param m the member
     * @throws InterruptedException if interrupted while waiting for the process to end
     */
    public void kill(Member m) throws InterruptedException {
        if (m.process != null) {
            m.process.destroyForcibly();
            m.process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Starts a killed member again on its data and waits until the cluster is healthy through it.
     *
     * @param m the member
     * @throws Exception if it did not come back within 30 s
     */
    public void restart(Member m) throws Exception {
        launch(m, "existing");
        awaitHealthy(m);
    }

    /**
     * The member that is leader now, asked of the live members; waits up to 10 s for one.
     *
     * @return the leader
     * @throws Exception if there was no leader within 10 s
     */
    public Member leader() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            for (Member m : members) {
                if (!m.alive()) {
                    continue;
                }
                try {
                    HttpResponse<String> answer = http.send(
                            HttpRequest.newBuilder(URI.create(m.clientUrl() + "/v3/maintenance/status"))
                                    .timeout(Duration.ofSeconds(2))
                                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    Matcher id = MEMBER_ID.matcher(answer.body());
                    Matcher leader = LEADER.matcher(answer.body());
                    if (id.find() && leader.find() && id.group(1).equals(leader.group(1))) {
                        return m;
                    }
                } catch (IOException e) {
                    // this one is not answering
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no etcd leader within 10 s");
            }
            Thread.sleep(50);
        }
    }

    private void destroy() {
        for (Member m : members) {
            if (m.process != null) {
                m.process.destroyForcibly();
            }
        }
        for (Member m : members) {
            if (m.process != null) {
                try {
                    m.process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // temp files; best effort
        }
    }

    /** Kills every member and deletes the data directories. */
    @Override
    public void close() {
        destroy();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
