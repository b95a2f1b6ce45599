package dev.dlock.testsupport;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
 * etcd servers for tests, the fault suite and the bench: {@code /usr/bin/etcd} processes (Debian's {@code
 * etcd-server}, which {@code scripts/test.sh} installs) on free ports (loopback, or the fault suite's
 * store address) with temporary data directories (on {@code /dev/shm} when there is one, so that fsync
 * is cheap), started through {@link ChildProcesses}. One member, or a cluster of three whose members can
 * be killed, frozen and restarted with their data. The system property {@code dlock.etcd.binary} names
 * another binary (for example a newer etcd unpacked from a later Debian release's {@code etcd-server}
 * package; {@code scripts/chaos.sh} sets it from {@code DLOCK_ETCD_BINARY}), and {@link #version()} says
 * which etcd that binary is, so that a caller can tell whether it has a known bug.
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
    private static final Pattern VERSION_LINE = Pattern.compile("etcd Version:\\s*(\\S+)");
    private static volatile String version;

    private final String host;
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
            return "http://" + host + ":" + peerPort;
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
         * The port clients connect to.
         *
         * @return the client port
         */
        public int clientPort() {
            return clientPort;
        }

        /**
         * The member's client URL, for a jetcd client.
         *
         * @return {@code http://host:port}
         */
        public String clientUrl() {
            return "http://" + host + ":" + clientPort;
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

    private EtcdServers(String host, int size) throws IOException {
        this.host = host;
        if (!new File(BINARY).canExecute()) {
            throw new IllegalStateException("no etcd server at " + BINARY
                    + ": install Debian's etcd-server package (apt-get install etcd-server), as scripts/test.sh does");
        }
        Path shm = Path.of("/dev/shm");
        root = Files.isDirectory(shm) && Files.isWritable(shm)
                ? Files.createTempDirectory(shm, "dlock-etcd-")
                : Files.createTempDirectory("dlock-etcd-");
        for (int i = 0; i < size; i++) {
            members.add(new Member("m" + i, FreePorts.next(), FreePorts.next()));
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
        return started("127.0.0.1", 1);
    }

    /**
     * Three members in one cluster, started and with a leader.
     *
     * @return the running cluster
     * @throws Exception if it could not be started
     */
    public static EtcdServers cluster() throws Exception {
        return started("127.0.0.1", 3);
    }

    /**
     * Three members in one cluster listening on {@code host} (the fault suite's store address), started
     * and with a leader.
     *
     * @param host the address every member binds and advertises
     * @return the running cluster
     * @throws Exception if it could not be started
     */
    public static EtcdServers cluster(String host) throws Exception {
        return started(host, 3);
    }

    private static EtcdServers started(String host, int size) throws Exception {
        EtcdServers servers = new EtcdServers(host, size);
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
     * The version of the etcd binary these servers run ({@code /usr/bin/etcd} or {@code dlock.etcd.binary}),
     * as its {@code --version} prints it; asked once and remembered.
     *
     * @return for example {@code 3.4.23}
     * @throws IllegalStateException if the binary cannot be run or prints no version
     */
    public static String version() {
        String known = version;
        if (known != null) {
            return known;
        }
        String output;
        try {
            Process p = new ProcessBuilder(BINARY, "--version")
                    .redirectErrorStream(true)
                    .start();
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + BINARY + " --version", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + BINARY + " --version", e);
        }
        Matcher m = VERSION_LINE.matcher(output);
        if (!m.find()) {
            throw new IllegalStateException(BINARY + " --version printed no version: " + output.strip());
        }
        version = m.group(1);
        return version;
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
        return members.stream().map(m -> host + ":" + m.clientPort).collect(Collectors.joining(","));
    }

    private void launch(Member m, String state) {
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
        try {
            m.process = ChildProcesses.start(new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log)));
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + BINARY, e);
        }
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
     * Kills a member at once (SIGKILL, also when frozen), keeping its data, and waits until it is gone.
     *
     * @param m the member
     */
    public void kill(Member m) {
        ChildProcesses.killTree(m.process);
    }

    /**
     * Starts a killed member again on its data without waiting for it: with the others down it cannot be
     * healthy alone.
     *
     * @param m the member
     */
    public void start(Member m) {
        launch(m, "existing");
    }

    /**
     * Starts a killed member again on its data and waits until the cluster is healthy through it.
     *
     * @param m the member
     * @throws Exception if it did not come back within 30 s
     */
    public void restart(Member m) throws Exception {
        start(m);
        awaitHealthy(m);
    }

    /**
     * Makes a member stop answering without dying (SIGSTOP).
     *
     * @param m the member
     */
    public void freeze(Member m) {
        ChildProcesses.signalTree(m.process.pid(), "STOP");
    }

    /**
     * Makes a frozen member answer again (SIGCONT).
     *
     * @param m the member
     */
    public void thaw(Member m) {
        ChildProcesses.signalTree(m.process.pid(), "CONT");
    }

    /**
     * POSTs a request to a member's v3 JSON gateway.
     *
     * @param m the member
     * @param path e.g. {@code /v3/maintenance/status}
     * @param body the JSON request
     * @return the answer's body, or null when the member does not answer or answers other than 200
     * @throws InterruptedException when interrupted while waiting for the answer
     */
    public String post(Member m, String path, String body) throws InterruptedException {
        try {
            HttpResponse<String> answer = http.send(
                    HttpRequest.newBuilder(URI.create(m.clientUrl() + path))
                            .timeout(Duration.ofSeconds(2))
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() == 200 ? answer.body() : null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The live member that says it is the leader now, or null when none does.
     *
     * @return the leader, or null
     * @throws InterruptedException when interrupted while asking
     */
    public Member leaderNow() throws InterruptedException {
        for (Member m : members) {
            String status = m.alive() ? post(m, "/v3/maintenance/status", "{}") : null;
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

    /**
     * The member that is leader now, asked of the live members; waits up to 10 s for one.
     *
     * @return the leader
     * @throws Exception if there was no leader within 10 s
     */
    public Member leader() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            Member leader = leaderNow();
            if (leader != null) {
                return leader;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no etcd leader within 10 s");
            }
            Thread.sleep(50);
        }
    }

    private void destroy() {
        members.forEach(m -> ChildProcesses.killTree(m.process));
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
}
